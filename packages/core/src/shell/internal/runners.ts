/**
 * The programs that run other programs in ways the gate does not follow — another root or namespace, a service
 * manager, a job runner, another user's shell, a debugger, the dynamic loader run as a program. A segment run
 * through one is unresolved: it asks (see docs/shell.md). The wrappers the gate does read through are in
 * `wrappers.ts`.
 *
 * @since 0.3.0
 */

/**
 * Commands that run other commands in ways the gate does not follow (another root, another namespace, a service
 * manager, a job runner, another user's shell, a debugger): their segments are unresolved.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNMODELLED_RUNNERS: ReadonlySet<string> = new Set([
  "chroot",
  "nsenter",
  "systemd-run",
  "parallel",
  "su",
  "sg",
  "newgrp",
  "pkexec",
  "script",
  "firejail",
  "bwrap",
  "valgrind",
  "gdb",
  "lldb",
  "ltrace",
  "perf",
  "catchsegv",
  "fakechroot",
  "proot",
  "torsocks",
  "proxychains",
  "proxychains4",
  "faketime",
  "rlwrap",
  "expect",
  "unbuffer",
  "dbus-run-session",
  "xvfb-run",
  "ssh-agent",
  "sshpass",
  "chpst",
  "prlimit",
  "numactl",
  "cpulimit",
  "coproc",
  "tmux",
  "screen",
  "at",
  "batch",
  "crontab",
  "ld.so",
  "zsh",
  "ksh",
  "mksh",
  "pdksh",
  "yash",
  "fish",
  "tcsh",
  "csh",
  "elvish",
  "nu",
  "xonsh",
  "pwsh",
  "powershell",
])

/**
 * True for the dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2 /bin/rm x`).
 *
 * @since 0.3.0
 * @category guards
 */
export const isLoader = (base: string): boolean => /^ld([-.].*)?\.so(\.\d+)*$/.test(base)
