import Glibc

/// SIGINT and SIGTERM, received synchronously with sigwait(2) rather than in a signal handler.
public enum TerminationSignal {
    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }

    /// Blocks SIGINT and SIGTERM in the calling thread and in every thread it starts later.
    /// Call it first in `main`, before any thread exists, so that `wait()` alone receives them.
    public static func block() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits until SIGINT or SIGTERM arrives and returns its number.
    public static func wait() -> Int32 {
        var set = signalSet()
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }
}
