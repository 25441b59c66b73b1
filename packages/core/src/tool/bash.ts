/** placeholder, being written */
export const name = "bash"
