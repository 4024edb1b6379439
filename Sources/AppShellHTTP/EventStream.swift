import AppShellConcurrency
import CMicroHTTPD

/// A server-sent event stream (`text/event-stream`): a handler returns it as a response body and
/// keeps it; anyone may then `send` events to it from any thread.
///
/// No worker thread waits for events: when the stream has nothing to send, its connection is
/// suspended (libmicrohttpd stops polling it), and `send` resumes it. A closed client is noticed
/// at the next write — the heartbeat comment every `eventHeartbeatSeconds` at the latest — and
/// `onClose` runs.
public final class EventStream: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var closed = false
        var finished = false
        var suspended = false
        var connection: Connection?
    }

    /// A connection pointer; libmicrohttpd's resume may be called from any thread.
    struct Connection: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let state = Locked(State())
    private let closeHandlers = Locked<[@Sendable () -> Void]>([])

    /// A stream with nothing queued yet.
    public init() {}

    /// Whether the client is still connected (as far as the server knows) and `close()` was not called.
    public var isOpen: Bool { state.withLock { !$0.closed && !$0.finished } }

    /// Queues one event: optional `event:` name and `id:`, and `data` (split into `data:` lines).
    public func send(event: String? = nil, id: String? = nil, data: String) {
        var text = ""
        if let event { text += "event: \(event)\n" }
        if let id { text += "id: \(id)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        text += "\n"
        enqueue(Array(text.utf8))
    }

    /// Queues a comment line (`: text`), which clients ignore: a heartbeat that keeps proxies from
    /// closing the connection and finds clients that went away.
    public func comment(_ text: String) { enqueue(Array(": \(text)\n\n".utf8)) }

    /// Ends the stream once what is queued has been sent.
    public func close() {
        // Resumed under the lock, as in `enqueue`: the connection cannot finish meanwhile.
        state.withLock { state in
            state.closed = true
            if let resume = Self.takeSuspended(&state) { MHD_resume_connection(resume.pointer) }
        }
    }

    /// Runs `handler` once when the stream ends (the client left, or `close()`).
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let alreadyFinished = state.withLock { $0.finished }
        if alreadyFinished { return handler() }
        closeHandlers.withLock { $0.append(handler) }
    }

    private func enqueue(_ bytes: [UInt8]) {
        // MHD_resume_connection is called under the lock: a reader that found nothing has then
        // already suspended the connection, so no event can slip between its check and its suspend.
        state.withLock { state in
            guard !state.closed, !state.finished else { return }
            state.pending.append(contentsOf: bytes)
            if let resume = Self.takeSuspended(&state) { MHD_resume_connection(resume.pointer) }
        }
    }

    private static func takeSuspended(_ state: inout State) -> Connection? {
        guard state.suspended, let connection = state.connection else { return nil }
        state.suspended = false
        return connection
    }

    // MARK: Called by the server

    /// Binds the stream to the connection that sends it (before the response is queued).
    func attach(_ connection: OpaquePointer) {
        state.withLock { $0.connection = Connection(pointer: connection) }
    }

    /// Copies up to `capacity` queued bytes into `buffer`: the count, 0 after suspending the
    /// connection when nothing is queued, or -1 at the end of the stream.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        state.withLock { state in
            if state.pending.isEmpty {
                if state.closed { return -1 }
                guard let connection = state.connection else { return -1 }
                MHD_suspend_connection(connection.pointer)
                state.suspended = true
                return 0
            }
            let count = min(capacity, state.pending.count)
            state.pending.withUnsafeBytes { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress!, byteCount: count)
            }
            state.pending.removeFirst(count)
            return count
        }
    }

    /// The connection is gone: no more sending, and the close handlers run.
    func finish() {
        state.withLock { state in
            state.finished = true
            state.connection = nil
            state.suspended = false
            state.pending = []
        }
        let handlers = closeHandlers.withLock { handlers -> [@Sendable () -> Void] in
            defer { handlers = [] }
            return handlers
        }
        for handler in handlers { handler() }
    }
}
