/** placeholder, being written */
export {}
