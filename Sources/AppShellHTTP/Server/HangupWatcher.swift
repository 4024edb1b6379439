import AppShellConcurrency
import CMicroHTTPD  // epoll and eventfd
import Dispatch
import Glibc

/// Watches the sockets of suspended connections — open event streams, requests waiting for a
/// deferred answer — and tells their owner as soon as the client hangs up.
///
/// libmicrohttpd does not poll a suspended connection, so a client that went away would only be
/// noticed at the next write: for a stream, a heartbeat later; for a deferred answer, after all
/// its work was done for no one. One thread watches the sockets with its own epoll set, for
/// `EPOLLRDHUP`, `EPOLLHUP` and `EPOLLERR` only (not for readable bytes: a pipelined request is
/// not a hang-up); libmicrohttpd's own sets are not touched. A socket is watched from its
/// suspension until its owner calls `unwatch`: while suspended, libmicrohttpd does not close it,
/// so its number is not reused meanwhile.
final class HangupWatcher: Sendable {
    private struct Entry {
        let socket: Int32
        let owner: ObjectIdentifier
        let onHangup: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        /// The token each watching owner has.
        var tokens: [ObjectIdentifier: UInt64] = [:]
        /// The token each socket in the epoll set was registered with.
        var watched: [Int32: UInt64] = [:]
        var nextToken: UInt64 = 1
        var watching = false
        var closing = false
    }

    private let name: String
    private let state = Locked(State())
    /// The epoll set; token 0 in it is `wakeDescriptor`, written to stop the thread.
    private let epollDescriptor: Int32
    private let wakeDescriptor: Int32
    private let stopped = DispatchSemaphore(value: 0)

    /// A watcher whose thread (once started) is named `name`.
    init(name: String = "appshell-hangups") {
        self.name = name
        epollDescriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        _ = epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, wakeDescriptor, &event)
    }

    deinit {
        Glibc.close(epollDescriptor)
        Glibc.close(wakeDescriptor)
    }

    /// Sockets watched now.
    var count: Int { state.withLock { $0.entries.count } }

    /// Watches `socket` for `owner` until `unwatch(owner)`, and calls `onHangup` once (on the
    /// watcher's thread) if the client hangs up first. Nothing for a socket of -1, an owner already
    /// watching, or once `stop` began.
    func watch(_ socket: Int32, for owner: AnyObject, onHangup: @escaping @Sendable () -> Void) {
        guard socket >= 0 else { return }
        let owner = ObjectIdentifier(owner)
        state.withLock { state in
            guard !state.closing, state.tokens[owner] == nil else { return }
            let token = state.nextToken
            state.nextToken += 1
            var event = epoll_event()
            event.events = EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            event.data.u64 = token
            // A number already in the set belongs to a socket that closed (the kernel drops a
            // closed socket from the set, but the number may be reused at once).
            guard
                epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, socket, &event) == 0
                    || epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, socket, &event) == 0
            else { return }
            state.entries[token] = Entry(socket: socket, owner: owner, onHangup: onHangup)
            state.tokens[owner] = token
            state.watched[socket] = token
        }
    }

    /// Stops watching the socket of `owner` (its request took the answer, its stream ended).
    func unwatch(_ owner: AnyObject) {
        state.withLock { state in
            guard let token = state.tokens[ObjectIdentifier(owner)] else { return }
            Self.forget(&state, token: token, epoll: epollDescriptor)
        }
    }

    /// Takes `token`'s entry away, and its socket out of the epoll set if `token` still holds it.
    private static func forget(_ state: inout State, token: UInt64, epoll: Int32) {
        guard let entry = state.entries.removeValue(forKey: token) else { return }
        state.tokens[entry.owner] = nil
        guard state.watched[entry.socket] == token else { return }
        state.watched[entry.socket] = nil
        var event = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, entry.socket, &event)
    }

    /// Starts the watching thread (once).
    func start() {
        let first = state.withLock { state -> Bool in
            defer { state.watching = true }
            return !state.watching && !state.closing
        }
        guard first else { return }
        let thread = BackgroundThread { [self] in
            watch()
            stopped.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops watching for good (at shutdown, once nothing suspended is left to watch).
    func stop() {
        let watching = state.withLock { state -> Bool in
            state.closing = true
            state.entries = [:]
            state.tokens = [:]
            state.watched = [:]
            defer { state.watching = false }
            return state.watching
        }
        guard watching else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
        stopped.wait()
    }

    private func watch() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            let count = epoll_wait(epollDescriptor, &events, Int32(events.count), -1)
            if count < 0 && errno != EINTR { return }
            var hungUp: [@Sendable () -> Void] = []
            for event in events.prefix(max(0, Int(count))) {
                let token = event.data.u64
                if token == 0 { return }
                state.withLock { state in
                    guard let entry = state.entries[token] else { return }
                    // Level-triggered: out of the set now, so it is reported once.
                    Self.forget(&state, token: token, epoll: epollDescriptor)
                    hungUp.append(entry.onHangup)
                }
            }
            for onHangup in hungUp { onHangup() }
        }
    }
}
