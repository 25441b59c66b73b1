/**
 * `@toolgate/core/builtins`: the built-in tools (`BuiltInTools` registers all of them in a Location) and the
 * helpers their inputs use.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ApplyPatchTool from "../builtin/apply-patch-tool.js"
/**
 * The `bash` built-in: runs one command string through the configured shell.
 *
 * @since 0.2.0
 * @category modules
 */
export * as BashTool from "../builtin/bash-tool.js"
/**
 * The twelve built-in tools as one Location-scoped layer.
 *
 * @since 0.2.0
 * @category modules
 */
export * as BuiltInTools from "../builtin/built-in-tools.js"
/**
 * The `edit` built-in: replaces an exact string in a file.
 *
 * @since 0.2.0
 * @category modules
 */
export * as EditTool from "../builtin/edit-tool.js"
/**
 * The `glob` built-in: lists the files under a directory that match a glob.
 *
 * @since 0.2.0
 * @category modules
 */
export * as GlobTool from "../builtin/glob-tool.js"
/**
 * The `grep` built-in: searches file contents by regular expression.
 *
 * @since 0.2.0
 * @category modules
 */
export * as GrepTool from "../builtin/grep-tool.js"
/**
 * The `apply_patch` text format: parsing an envelope into hunks and applying an update's chunks.
 *
 * @since 0.2.0
 * @category modules
 */
export * as Patch from "../builtin/patch.js"
/**
 * The `question` built-in: asks the user multiple-choice questions.
 *
 * @since 0.2.0
 * @category modules
 */
export * as QuestionTool from "../builtin/question-tool.js"
/**
 * The `read` built-in: reads a text file by pages, an image as media, or a directory listing.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ReadTool from "../builtin/read-tool.js"
/**
 * The file-system side of `read`, as a service that tests can replace.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ReadToolFileSystem from "../builtin/read-tool-file-system.js"
/**
 * The `skill` built-in: loads one discovered skill's instructions.
 *
 * @since 0.2.0
 * @category modules
 */
export * as SkillTool from "../builtin/skill-tool.js"
/**
 * The `todowrite` built-in: replaces the session's todo list.
 *
 * @since 0.2.0
 * @category modules
 */
export * as TodoWriteTool from "../builtin/todo-write-tool.js"
/**
 * The `webfetch` built-in: one permission-checked HTTP(S) GET returned as text, Markdown or HTML.
 *
 * @since 0.2.0
 * @category modules
 */
export * as WebFetchTool from "../builtin/web-fetch-tool.js"
/**
 * The `websearch` built-in: a web search through an Exa or Parallel MCP endpoint.
 *
 * @since 0.2.0
 * @category modules
 */
export * as WebSearchTool from "../builtin/web-search-tool.js"
/**
 * The `write` built-in: writes a whole file.
 *
 * @since 0.2.0
 * @category modules
 */
export * as WriteTool from "../builtin/write-tool.js"
