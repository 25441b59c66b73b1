/** placeholder, being written */
export const name = "skill"
