import AppShellConcurrency
import CMicroHTTPD
import Glibc
import Synchronization

/// A connection of an event loop's daemon: suspended on the loop's thread, resumed from any.
struct LoopConnection: @unchecked Sendable {
    // @unchecked: the pointer is only handed to libmicrohttpd's suspend and resume.
    let pointer: OpaquePointer
    /// The loop the connection's daemon runs on.
    let loop: EventLoop?

    /// The connection `pointer`, of the loop whose thread calls this.
    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        loop = EventLoop.current
    }

    /// Suspends the connection (on its loop's thread): libmicrohttpd stops polling it.
    func suspend() { MHD_suspend_connection(pointer) }

    /// Resumes the connection, from any thread. A daemon without a thread of its own has no
    /// wake-up of its own (libmicrohttpd drops its inter-thread channel): the loop is woken.
    func resume() {
        MHD_resume_connection(pointer)
        loop?.resumed()
    }
}

/// One of the server's event loops: a libmicrohttpd daemon (epoll, no thread of its own) driven
/// by a thread of ours. The server runs one per configured thread, all accepting from one
/// listening socket.
///
/// DESIGN: the loop is ours so that a request waiting a moment for its answer — a store commit,
/// a few milliseconds — can stay *parked* on it instead of being suspended. libmicrohttpd 0.9.75
/// suspends a connection with `EPOLL_CTL_DEL` and resumes it with an eventfd write, an
/// `EPOLL_CTL_ADD` and an empty read: four system calls per deferred answer (parked instead, an
/// SQLite action took 33.0 µs of CPU instead of 34.5: the Performance article, "Event loops of our
/// own"). A parked request's handler returns without an answer; libmicrohttpd keeps the
/// connection on its ready list and calls the handler again at every turn of the loop, which
/// then answers once the answer came. Its own thread could not do this: a connection on the
/// ready list makes it poll with a zero timeout, a busy loop. This loop knows that the parked
/// requests are why (`parked`), and sleeps until an event, a wake-up from whoever answers
/// (`wake`, once per batch of answers), or a millisecond; it turns again at once when the turn
/// left work that needs no event: an answer to send, a resumed connection, a request body being
/// received (more of it may be in the socket already). Requests that wait longer (a password
/// check) are suspended as before.
final class EventLoop: @unchecked Sendable {
    // @unchecked: `parked` and `turnAgain` are used by the loop's thread alone; the rest
    // is immutable or synchronised.

    /// The daemon this loop runs.
    let daemon: OpaquePointer
    /// Its connections that wait for a request (the loop's thread only, and the stopping thread
    /// once the loop has ended).
    let idle: IdleConnections
    private let name: String
    private let epollDescriptor: Int32
    private let wakeDescriptor: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = Condition()
    private var isFinished = false
    /// Requests parked on this loop now (the loop's thread only).
    @exclusivity(unchecked) private var parked = 0
    /// Set when the next turn has work at once (in this turn a parked request was answered, a
    /// connection resumed, part of a body received): it then begins without waiting (the loop's
    /// thread only).
    @exclusivity(unchecked) var turnAgain = false
    /// Whether the daemon speaks TLS: its turns are watched for the handshake's busy loop
    /// (`quickTurns`).
    private let servesTLS: Bool
    /// How many turns in a row returned at once (the loop's thread only). libmicrohttpd 0.9.75
    /// keeps a TLS connection whose handshake waits for the client's bytes on its ready list:
    /// every turn tries the handshake again, gets `EAGAIN` and asks for a zero wait — a loop
    /// that spun a core for as long as any handshake was unfinished (a client's round trip, or
    /// the whole handshake timeout for a client that sends nothing; bench/RESULTS.md). After
    /// `quickTurnsBeforeWaiting` such turns the loop waits for an event itself, as for parked
    /// requests, at most `spinWaitMilliseconds`.
    @exclusivity(unchecked) private var quickTurns = 0
    /// The turns the loop took (tests read it: a busy loop takes thousands a second).
    let turns = Atomic<Int>(0)
    static let quickTurnsBeforeWaiting = 3
    static let quickTurnMicros = 50
    static let spinWaitMilliseconds: Int32 = 5
    /// What batches that answered parked requests left, to be let go of on this thread, where
    /// the requests' objects were made (see `ThreadBatch.leave`).
    private let leftovers = Locked<[AnyObject]>([])
    private let hasLeftovers = Atomic<Bool>(false)

    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The loop whose thread calls this; `nil` on any other thread.
    static var current: EventLoop? {
        pthread_getspecific(currentKey).map { Unmanaged<EventLoop>.fromOpaque($0).takeUnretainedValue() }
    }

    /// A loop for `daemon` (started without an internal thread), not running yet, whose waiting
    /// connections `idle` tidies; `servesTLS` for a daemon that speaks TLS.
    init(daemon: OpaquePointer, name: String, idle: IdleConnections, servesTLS: Bool = false) {
        self.daemon = daemon
        self.name = name
        self.idle = idle
        self.servesTLS = servesTLS
        epollDescriptor = appshell_mhd_epoll_fd(daemon)
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        // In the daemon's own epoll set, so that a wake-up ends its wait: libmicrohttpd skips an
        // event whose pointer is NULL. Edge-triggered: each write is one wake-up and nothing has
        // to read the counter back.
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLET.rawValue
        event.data.ptr = nil
        _ = epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, wakeDescriptor, &event)
    }

    deinit { close(wakeDescriptor) }

    /// Starts the loop's thread.
    func start() {
        let thread = BackgroundThread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Ends the loop and returns once its thread no longer touches the daemon.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        wake()
        finished.lock()
        while !isFinished { finished.wait(milliseconds: 100) }
        finished.unlock()
    }

    /// Has the loop take a turn: at once when called on its own thread, else by ending its wait.
    func resumed() {
        if EventLoop.current === self { turnAgain = true } else { wake() }
    }

    /// Ends the loop's current wait (from any thread).
    func wake() {
        var one: UInt64 = 1
        if write(wakeDescriptor, &one, 8) < 0 && errno == EAGAIN {
            // The counter is full (after 2^64 - 2 wake-ups): empty it and write again.
            var value: UInt64 = 0
            _ = read(wakeDescriptor, &value, 8)
            _ = write(wakeDescriptor, &one, 8)
        }
    }

    /// Wakes the loop for an answer given now: at the end of the calling thread's batch (one
    /// wake-up for all the answers a store commit gives), or at once outside a batch. What the
    /// batch left is let go of on this loop's thread.
    func wakeForAnswer() {
        let inBatch = ThreadBatch.atEnd(once: ObjectIdentifier(self)) { [self] in
            let left = ThreadBatch.takeLeftovers()
            if !left.isEmpty {
                leftovers.withLock { $0.append(contentsOf: left) }
                hasLeftovers.store(true, ordering: .releasing)
            }
            wake()
        }
        if !inBatch { wake() }
    }

    /// Notes a request parked on this loop (on the loop's thread).
    func park() { parked += 1 }

    /// Notes a parked request answered or gone (on the loop's thread).
    func unpark() { parked -= 1 }

    private func run() {
        pthread_setspecific(Self.currentKey, Unmanaged.passUnretained(self).toOpaque())
        var ready = pollfd(fd: epollDescriptor, events: Int16(POLLIN), revents: 0)
        while !stopping.load(ordering: .relaxed) {
            // The connections kept alive past their timeout are closed, and near the limit the
            // oldest waiting ones (see `IdleConnections`).
            turns.add(1, ordering: .relaxed)
            let untilTimeout = idle.tidy()
            if parked == 0 && quickTurns < Self.quickTurnsBeforeWaiting {
                // libmicrohttpd waits for the next event or connection timeout itself (not at all
                // when it has work at once: a resumed connection, a request already read), at most
                // until the next kept-alive connection's timeout.
                turnAgain = false
                if servesTLS && untilTimeout != 0 {
                    let began = Clock.monotonicMicros()
                    _ = MHD_run_wait(daemon, untilTimeout)
                    quickTurns = Clock.monotonicMicros() - began < Self.quickTurnMicros ? quickTurns + 1 : 0
                } else {
                    _ = MHD_run_wait(daemon, untilTimeout)
                }
            } else {
                // libmicrohttpd would ask for a zero wait (the parked connections, or a TLS
                // handshake waiting for its client, are on its ready list): wait for an event or a
                // wake-up instead, at most a millisecond with parked requests (their answers come
                // without an event), else `spinWaitMilliseconds`; not at all when the next turn
                // has work at once. An event ends the watch for a handshake's busy loop.
                if turnAgain {
                    turnAgain = false
                } else {
                    let limit = Self.spinWaitMilliseconds
                    let wait = parked > 0 ? 1 : untilTimeout < 0 ? limit : min(untilTimeout, limit)
                    if poll(&ready, 1, wait) > 0 { quickTurns = 0 }
                }
                _ = MHD_run(daemon)
            }
            if hasLeftovers.exchange(false, ordering: .acquiring) {
                let left = leftovers.withLock { list -> [AnyObject] in
                    defer { list = [] }
                    return list
                }
                withExtendedLifetime(left) {}
            }
        }
        pthread_setspecific(Self.currentKey, nil)
        finished.lock()
        isFinished = true
        finished.broadcast()
        finished.unlock()
    }
}
