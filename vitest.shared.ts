/**
 * What every package's vitest project shares: `@toolgate/*` imports resolve through the `@toolgate/source` export
 * condition to the TypeScript sources, so tests see every edit without a build (published `exports` point at
 * `dist`). Child processes that tests start get the same through `SOURCE_NODE_ARGS`.
 */
export const SOURCE_CONDITION = "@toolgate/source"

const conditions = [SOURCE_CONDITION, "module", "node", "development|production"]

/** Vite resolve options for both the client and the server (SSR) module graph that vitest runs tests in. */
export const sourceResolution = {
  resolve: { conditions },
  ssr: { resolve: { conditions } },
}

/** Node arguments that run a TypeScript entry with `@toolgate/*` resolved to sources (tsx is a dev dependency). */
export const SOURCE_NODE_ARGS: ReadonlyArray<string> = [`--conditions=${SOURCE_CONDITION}`, "--import", "tsx"]
