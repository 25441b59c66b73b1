/**
 * `@toolgate/core/builtins`: the built-in tools (`BuiltInTools` registers all of them in a Location) and the
 * helpers their inputs use.
 *
 * @since 0.2.0
 */
export * as ApplyPatchTool from "../builtin/apply-patch-tool.js"
export * as BashTool from "../builtin/bash-tool.js"
export * as BuiltInTools from "../builtin/built-in-tools.js"
export * as EditTool from "../builtin/edit-tool.js"
export * as GlobTool from "../builtin/glob-tool.js"
export * as GrepTool from "../builtin/grep-tool.js"
export * as Patch from "../builtin/patch.js"
export * as QuestionTool from "../builtin/question-tool.js"
export * as ReadTool from "../builtin/read-tool.js"
export * as ReadToolFileSystem from "../builtin/read-tool-file-system.js"
export * as SkillTool from "../builtin/skill-tool.js"
export * as TodoWriteTool from "../builtin/todo-write-tool.js"
export * as WebFetchTool from "../builtin/web-fetch-tool.js"
export * as WebSearchTool from "../builtin/web-search-tool.js"
export * as WriteTool from "../builtin/write-tool.js"
