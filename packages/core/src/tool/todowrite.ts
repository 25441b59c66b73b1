/** placeholder, being written */
export const name = "todowrite"
