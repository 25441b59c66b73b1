import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { ChildEnvironment } from "../src/index.js"

const scrubbed = (parent: Record<string, string>, allow: ReadonlyArray<string> = []) =>
  ChildEnvironment.overrides(ChildEnvironment.settings({ mode: "scrub", allow: [...allow] }, "inherit"), parent)

describe("ChildEnvironment scrub", () => {
  it("removes the common secret names the first list missed, and keeps the ordinary variables", () => {
    const secrets = {
      DB_PASS: "p",
      MYSQL_PWD: "p",
      PGPASSWORD: "p",
      REDIS_PASS_FILE: "/run/p",
      ADMIN_PW: "p",
      CI_JOB_JWT: "j",
      SLACK_WEBHOOK_URL: "https://hooks.example/T/B/x",
      NPM_TOKEN: "t",
      AUTH_BEARER: "b",
    }
    const ordinary = {
      PATH: "/usr/bin",
      HOME: "/home/u",
      PWD: "/work",
      OLDPWD: "/",
      USER: "u",
      SHELL: "/bin/sh",
      LANG: "C.UTF-8",
      TERM: "xterm",
      TMPDIR: "/tmp",
      NODE_ENV: "test",
      DATABASE_HOST: "db.internal",
      REDIS_URL: "redis://cache.internal:6379/0",
      HTTP_PROXY: "http://proxy.internal:3128",
      GIT_REMOTE: "ssh://git@host/repo.git",
    }
    const out = scrubbed({ ...secrets, ...ordinary })
    expect(out).toEqual(Object.fromEntries(Object.keys(secrets).map((name) => [name, undefined])))
  })

  it("removes a variable whose value is a URL with a password, whatever its name", () => {
    const out = scrubbed({
      MONGO_URI: "mongodb://app:s3cret@db:27017/app",
      CACHE: "redis://:s3cret@cache:6379",
      UPSTREAM: "https://user:@host/",
      MIRROR: "https://mirror.example/path",
      PLAIN_USER: "ssh://git@github.com/x",
    })
    expect(out).toEqual({ MONGO_URI: undefined, CACHE: undefined, UPSTREAM: undefined })
  })

  it("removes values that are private keys or tokens of well-known formats", () => {
    const out = scrubbed({
      A: "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
      B: `ghp_${"a".repeat(36)}`,
      C: `github_pat_${"A1_".repeat(10)}`,
      D: "AKIAIOSFODNN7EXAMPLE",
      E: `xoxb-${"1".repeat(12)}-abc`,
      F: `npm_${"x".repeat(36)}`,
      G: `sk-${"k".repeat(40)}`,
      H: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.sig",
      KEEP: "just-a-value",
      ALSO_KEEP: "sk-short",
    })
    expect(Object.keys(out).sort()).toEqual(["A", "B", "C", "D", "E", "F", "G", "H"])
  })

  it("keeps allow-listed names even when their value looks secret", () => {
    expect(scrubbed({ MY_PROXY: "http://u:p@proxy:3128" }, ["MY_PROXY"])).toEqual({})
  })

  it("removes every credential URL, whatever the scheme, user and password", () => {
    const word = FastCheck.stringMatching(/^[A-Za-z0-9._~%!$&'()*+,;=-]{0,12}$/)
    const scheme = FastCheck.stringMatching(/^[a-z][a-z0-9+.-]{0,8}$/)
    FastCheck.assert(
      FastCheck.property(scheme, word, word, (s, user, password) => {
        const out = scrubbed({ VALUE: `${s}://${user}:${password}@host.example:5432/db` })
        return "VALUE" in out && out.VALUE === undefined
      }),
    )
  })

  it("inherit passes credential-looking values through", () => {
    const out = ChildEnvironment.overrides(ChildEnvironment.settings("inherit", "scrub"), {
      MONGO_URI: "mongodb://app:s3cret@db/app",
    })
    expect(out).toEqual({})
  })
})
