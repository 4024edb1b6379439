import Glibc

/// The C library's memory allocator, set up for a server whose requests wait for another thread.
///
/// DESIGN: glibc keeps a small cache of free memory per thread (its `tcache`: 7 blocks of each
/// size by default), taken and refilled without a lock. A server thread whose requests wait for
/// the store writer keeps each waiting request's objects (its answer, its write, the closures
/// that finish it) alive until the writer's batch is done, then lets go of a batch's worth at
/// once: with dozens of requests per batch, the cache overflows into the allocator's shared
/// bins, and the next requests' allocations go the slow way (sorting those bins, merging
/// blocks). Measured in scenario (e) with the SQLite store (the Performance article), 15 allocations
/// per action took that slow path against 5 with the memory store; with room for 256 blocks of
/// each size, 6. Each thread keeps at most what it let go of at once, as before, only in its
/// own cache instead of the shared bins.
///
/// glibc reads the setting (`GLIBC_TUNABLES`) only when a program starts: `restartIfUntuned`
/// starts the program again, in the same process (`execv`: same pid, arguments and environment),
/// with the setting added. A setting of `glibc.malloc.tcache_count` already in the environment
/// is kept as it is (that is how to choose another size, or glibc's default).
public enum AllocatorTuning {
    /// The setting added to `GLIBC_TUNABLES`.
    public static let tunable = "glibc.malloc.tcache_count=256"

    /// Set in the environment of the program started again: it is never started a third time,
    /// even when the C library drops the setting (a set-user-id program). Not `APPSHELL_`: those
    /// names are the configuration's, which refuses one it does not know.
    public static let marker = "_APPSHELL_ALLOCATOR_TUNED"

    /// The `GLIBC_TUNABLES` to start the program again with, given its environment; `nil` when
    /// it should not be: the setting is there already, it was started again already, or it runs
    /// under Valgrind (whose tools would lose the program at `execv`).
    public static func tunables(restartingWith environment: [String: String]) -> String? {
        guard environment[marker] == nil else { return nil }
        if let preload = environment["LD_PRELOAD"], preload.contains("vgpreload") { return nil }
        guard let current = environment["GLIBC_TUNABLES"], !current.isEmpty else { return tunable }
        let names = current.split(separator: ":").map { $0.prefix { $0 != "=" } }
        if names.contains("glibc.malloc.tcache_count") { return nil }
        return current + ":" + tunable
    }

    /// Starts the program again with `tunable` added to `GLIBC_TUNABLES`, unless
    /// `tunables(restartingWith:)` says not to. Returns only when it does not (or when `execv`
    /// fails: the program then goes on with glibc's default). Call it first thing in `main`,
    /// before any thread starts: nothing done before it survives.
    public static func restartIfUntuned() {
        var environment: [String: String] = [:]
        for name in [marker, "LD_PRELOAD", "GLIBC_TUNABLES"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        guard let tunables = tunables(restartingWith: environment) else { return }
        // The file itself, not "/proc/self/exe": the kernel names the process after the path
        // it runs (`ps` and `pgrep` would show "exe").
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &path, Int(PATH_MAX))
        guard length > 0 else { return }
        path[length] = 0
        setenv("GLIBC_TUNABLES", tunables, 1)
        setenv(marker, "1", 1)
        execv(path, CommandLine.unsafeArgv)
        // Not started again (the file was replaced or removed meanwhile): as it was.
        if let previous = environment["GLIBC_TUNABLES"] {
            setenv("GLIBC_TUNABLES", previous, 1)
        } else {
            unsetenv("GLIBC_TUNABLES")
        }
        unsetenv(marker)
    }
}
