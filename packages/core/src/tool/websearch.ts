/** placeholder, being written */
export const name = "websearch"
