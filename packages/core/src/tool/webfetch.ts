/** placeholder, being written */
export const name = "webfetch"
