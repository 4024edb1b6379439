import Glibc

/// SIGINT and SIGTERM (stop) and SIGHUP (reload), received synchronously with sigwait(2) rather
/// than in a signal handler.
package enum TerminationSignal {
    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        return set
    }

    /// The signal that asks a server to load its certificate again rather than stop.
    package static let reload = SIGHUP

    /// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread and in every thread it starts
    /// later. Call it first in `main`, before any thread exists, so that `wait()` alone receives
    /// them.
    package static func block() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Makes a write to a connection whose peer closed it fail with `EPIPE` rather than end the
    /// process (SIGPIPE's default): libmicrohttpd sends with `MSG_NOSIGNAL`, but hiredis writes
    /// to Redis with write(2), and Redis may close a connection at any moment (a restart, a
    /// failover). Call it first in `main`, with `block()`.
    package static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Waits until SIGINT, SIGTERM or SIGHUP (`reload`) arrives and returns its number.
    package static func wait() -> Int32 {
        var set = signalSet()
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }
}
