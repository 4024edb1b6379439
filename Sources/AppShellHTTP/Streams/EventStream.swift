import AppShellConcurrency
import CMicroHTTPD
import Glibc

/// A server-sent event stream (`text/event-stream`): a handler returns it as a response body and
/// keeps it; anyone may then `send` events to it from any thread.
///
/// No event loop waits for events: when the stream has nothing to send, its connection is
/// suspended (libmicrohttpd stops polling it), and `send` resumes it. The server watches the
/// suspended connection's socket itself, so a client that goes away ends the stream at once.
///
/// What is queued and not yet sent is bounded (`HTTPServerConfiguration.eventStreamBacklogBytes`):
/// a client that falls that far behind has its stream ended and its connection closed, and an
/// `EventSource` then reconnects with `Last-Event-ID` and gets the current state.
///
/// A stream always ends, and its `onClose` handlers always run once: when the client leaves, on
/// `close()`, when it falls behind, when the server refuses or cannot send it, and when it is
/// released without ever having been sent.
public final class EventStream: Sendable {
    private struct State {
        /// Bytes queued; those before `sent` were handed to libmicrohttpd already.
        var pending: [UInt8] = []
        var sent = 0
        var backlogLimit = EventStream.defaultBacklogBytes
        /// `close()` was called: end once what is queued is sent.
        var closed = false
        /// Ended at once, with what is queued dropped: the connection is closed.
        var abandoned = false
        var finished = false
        var suspended = false
        var connection: LoopConnection?
        /// The connection's socket while `connection` is set (libmicrohttpd ends the response,
        /// clearing `connection`, before it closes the socket), or -1.
        var socket: Int32 = -1
        var closeHandlers: [@Sendable () -> Void] = []

        var queued: Int { pending.count - sent }
    }

    /// The backlog of a stream not yet handed to a server (the server's limit applies from then).
    static let defaultBacklogBytes = 65_536

    private let state = Locked(State())

    /// A stream with nothing queued yet.
    public init() {}

    deinit {
        // Released without ever being sent (or ended): whoever subscribed it must still let go.
        if !state.withLock({ $0.finished }) { finish() }
    }

    /// Whether the client is still connected (as far as the server knows), `close()` was not
    /// called and the stream did not fall behind.
    public var isOpen: Bool { state.withLock { !$0.closed && !$0.abandoned && !$0.finished } }

    /// The bytes queued and not yet handed to the connection; never more than the backlog limit.
    public var queuedBytes: Int { state.withLock { $0.queued } }

    /// The bytes the stream's queue holds room for (what it costs in memory besides itself).
    var bufferCapacity: Int { state.withLock { $0.pending.capacity } }

    /// Queues one event: optional `event:` name and `id:`, and `data` (split into `data:` lines).
    public func send(event: String? = nil, id: String? = nil, data: String) {
        enqueue(Self.frame(event: event, id: id, data: data))
    }

    /// The bytes of one event. `data` is cut into `data:` lines at every line break the client
    /// reads as one (LF, CR, CRLF), working on its UTF-8 bytes: a state's JSON (kilobytes, and
    /// no line break) is copied once. Splitting the `String` by `Character` walked every
    /// grapheme, the largest cost of publishing a state (issue 34: 18 % of the server's CPU
    /// while a user's pages were rendered again), and kept a CR before an LF in the line.
    static func frame(event: String?, id: String?, data: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.utf8.count + 32)
        if let event {
            bytes += "event: ".utf8
            bytes += event.utf8
            bytes.append(0x0A)
        }
        if let id {
            bytes += "id: ".utf8
            bytes += id.utf8
            bytes.append(0x0A)
        }
        var data = data
        data.withUTF8 { text in
            var start = 0
            var index = 0
            while true {
                let end = index == text.count
                let byte: UInt8 = end ? 0x0A : text[index]
                if end || byte == 0x0A || byte == 0x0D {
                    bytes += "data: ".utf8
                    bytes += UnsafeBufferPointer(rebasing: text[start..<index])
                    bytes.append(0x0A)
                    if end { break }
                    index += byte == 0x0D && index + 1 < text.count && text[index + 1] == 0x0A ? 2 : 1
                    start = index
                } else {
                    index += 1
                }
            }
        }
        bytes.append(0x0A)
        return bytes
    }

    /// Queues a comment line (`: text`), which clients ignore: a heartbeat that keeps proxies from
    /// closing the connection.
    public func comment(_ text: String) { enqueue(Array(": \(text)\n\n".utf8)) }

    /// Ends the stream once what is queued has been sent.
    public func close() {
        // Resumed under the lock, as in `enqueue`: the connection cannot finish meanwhile.
        state.withLock { state in
            state.closed = true
            if let resume = Self.takeSuspended(&state) { resume.resume() }
        }
    }

    /// Runs `handler` once when the stream ends (the client left, `close()`, or it fell behind).
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        // Under the lock that `finish` takes the handlers with: none is added after they ran.
        let alreadyFinished = state.withLock { state -> Bool in
            if !state.finished { state.closeHandlers.append(handler) }
            return state.finished
        }
        if alreadyFinished { handler() }
    }

    private func enqueue(_ bytes: [UInt8]) {
        // MHD_resume_connection is called under the lock: a reader that found nothing has then
        // already suspended the connection, so no event can slip between its check and its suspend.
        let unsent = state.withLock { state -> Bool in
            guard !state.closed, !state.abandoned, !state.finished else { return false }
            if state.queued + bytes.count > state.backlogLimit {
                Self.abandon(&state)
                return state.connection == nil
            }
            state.pending.append(contentsOf: bytes)
            if let resume = Self.takeSuspended(&state) { resume.resume() }
            return false
        }
        // Fallen behind before it was ever sent: nothing else will end it.
        if unsent { finish() }
    }

    private static func takeSuspended(_ state: inout State) -> LoopConnection? {
        guard state.suspended, let connection = state.connection else { return nil }
        state.suspended = false
        return connection
    }

    /// Drops what is queued and closes the connection: its socket is shut down, so that
    /// libmicrohttpd's next write fails even when it waits for a client that does not read, and
    /// the next read ends the stream with an error.
    private static func abandon(_ state: inout State) {
        state.abandoned = true
        state.pending = []
        state.sent = 0
        if state.connection != nil && state.socket >= 0 { _ = Glibc.shutdown(state.socket, Int32(SHUT_RDWR)) }
        if let resume = takeSuspended(&state) { resume.resume() }
    }

    // MARK: Called by the server

    /// Binds the stream to the connection that sends it and its socket (before the response is
    /// queued), with the server's backlog limit.
    func attach(_ connection: OpaquePointer, socket: Int32, backlogLimit: Int) {
        state.withLock { state in
            state.connection = LoopConnection(connection)
            state.socket = socket
            state.backlogLimit = backlogLimit
            if state.queued > backlogLimit { Self.abandon(&state) }
        }
    }

    /// Ends the stream at once and closes its connection: the client went away.
    func abandon() {
        state.withLock { state in
            guard !state.finished else { return }
            Self.abandon(&state)
        }
    }

    /// Ends a stream that the server will not send (refused, a `HEAD` request, or libmicrohttpd
    /// could not make its response): its close handlers run now.
    func discard() {
        state.withLock { state in
            state.abandoned = true
            state.pending = []
            state.sent = 0
        }
        finish()
    }

    /// Copies up to `capacity` queued bytes into `buffer`: the count; 0 after suspending the
    /// connection when nothing is queued; -1 at the end of the stream; -2 to close the connection
    /// at once (the client left or fell behind).
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        state.withLock { state in
            if state.abandoned { return -2 }
            if state.queued == 0 {
                if state.closed { return -1 }
                guard let connection = state.connection else { return -2 }
                connection.suspend()
                state.suspended = true
                return 0
            }
            let count = min(capacity, state.queued)
            let start = state.sent
            state.pending.withUnsafeBytes { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + start, byteCount: count)
            }
            state.sent += count
            // Sent bytes are dropped when all are sent, or when they are at least half: each
            // byte is moved at most once, so a read costs what it copies (no `removeFirst` per read).
            // All sent, the buffer itself goes: an open stream is idle almost all of its life, and
            // thousands of them each keeping the capacity of their largest event would hold
            // kilobytes apiece for nothing (the next event allocates again).
            if state.sent == state.pending.count {
                state.pending = []
                state.sent = 0
            } else if state.sent >= 16_384 && state.sent * 2 >= state.pending.count {
                state.pending.removeFirst(state.sent)
                state.sent = 0
            }
            return count
        }
    }

    /// The stream has ended (the connection is gone, or it was never sent): no more sending, and
    /// the close handlers run, once.
    func finish() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.finished else { return [] }
            state.finished = true
            state.connection = nil
            state.socket = -1
            state.suspended = false
            state.pending = []
            state.sent = 0
            defer { state.closeHandlers = [] }
            return state.closeHandlers
        }
        for handler in handlers { handler() }
    }
}
