import AppShellConcurrency
import CMicroHTTPD
import Synchronization

/// An answer that comes later: a handler returns `Response.deferred(pending)` at once, hands its
/// slow work elsewhere (a worker pool), and that work calls `fulfil` — from any thread — when the
/// answer is ready.
///
/// No event loop waits meanwhile. A brief answer (`init(brief:)`: a store commit) leaves the
/// request parked on its loop, which calls its handler again at each turn and wakes when the
/// answer is given (`EventLoop`); any other suspends the request's connection (libmicrohttpd
/// stops polling it) and resumes it on `fulfil`. Either way the answer is sent from the
/// connection's loop. Header fields of the deferred response (a `Set-Cookie`) are added to the
/// answer unless it carries a field of the same name.
///
/// At shutdown a waiting request is in flight like any other: it is waited for, up to the
/// shutdown timeout; then the server answers, by itself, every one still waiting (503 with
/// `Retry-After`). Work should `claim` before it starts and skip itself when that fails, so that
/// nothing is done for a request answered that way.
///
/// Work that may take long (an action that awaits another service) registers `onCancel`: it is
/// told when its answer will not be used — the client went away while it waited (its socket is
/// watched meanwhile, as libmicrohttpd does not poll a suspended connection), or the server
/// answered by itself at shutdown. Once it `beginFinishing`, neither answers it any more: what it
/// commits from then on is what its answer says.
public final class PendingResponse: Sendable {
    private enum Phase {
        case waiting
        case claimed
        /// The work is committing its outcome: only its own answer (`fulfil`) is given, but at
        /// the very end of a shutdown.
        case finishing
        case answered(Response)
        case taken
    }

    private struct State {
        var phase = Phase.waiting
        /// The loop the request is parked on (a brief answer).
        var loop: EventLoop?
        var connection: LoopConnection?
        var suspended = false
        /// Set while `answer` resumes the connection outside the lock.
        var resuming = false
        var forward: (to: PendingResponse, headers: HTTPHeaders)?
        /// Signalled when the answer is given, for a waiter without a connection.
        var waiter: Condition?
        /// Whether the work's answer will not be used (`cancel`), and who to tell then.
        var cancelled = false
        var onCancel: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())
    /// Raised with the answer: what a parked request's handler, called at every turn of its loop,
    /// looks at first (one load, no lock; its call went on to the lock and back through copies
    /// of the request's waiting state: 2.9 such calls per deferred action, callgrind).
    private let given = Atomic<Bool>(false)
    /// Whether the answer comes within moments (see `init(brief:)`).
    let isBrief: Bool

    /// A response not answered yet. `brief`: the answer comes within moments — a store commit,
    /// not a password check or a call to another service — so the request stays parked on its
    /// event loop, called again at each of its turns, instead of having its connection suspended
    /// (cheaper per answer, but a cost at every turn while it waits).
    public init(brief: Bool = false) { isBrief = brief }

    /// Marks the work for this answer as begun; false when the request was answered already (the
    /// server is shutting down): then do nothing.
    public func claim() -> Bool {
        state.withLock { state in
            guard case .waiting = state.phase else { return false }
            state.phase = .claimed
            return true
        }
    }

    /// Marks the work as committing its outcome, which its own answer will then say: from now on
    /// a client that goes away or a shutdown's timeout no longer answers it nor cancels it (but
    /// the last moment before libmicrohttpd stops). False when it was answered or cancelled
    /// already: then commit nothing. Call it where the outcome is decided (under the lock that
    /// commits it); again (a commit tried again) it stays true.
    public func beginFinishing() -> Bool {
        state.withLock { state in
            switch state.phase {
            case .finishing: return true
            case .waiting, .claimed:
                guard !state.cancelled else { return false }
                state.phase = .finishing
                return true
            case .answered, .taken: return false
            }
        }
    }

    /// Whether an answer was given (by `fulfil`, or by the server at shutdown).
    public var isAnswered: Bool {
        state.withLock { state in
            switch state.phase {
            case .waiting, .claimed, .finishing: return false
            case .answered, .taken: return true
            }
        }
    }

    /// Runs `handler` once when the work for this answer should stop, as its answer will not be
    /// used: the client went away while it waited, or the server answered by itself (shutting
    /// down). At once when that happened already. Safe from any thread; `handler` runs with no
    /// lock held, on the thread that learnt it.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if !state.cancelled { state.onCancel.append(handler) }
            return state.cancelled
        }
        if now { handler() }
    }

    /// Whether the work for this answer was told to stop (see `onCancel`).
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Tells the work its answer will not be used (see `onCancel`); only the first call does.
    func cancel() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.cancelled else { return [] }
            state.cancelled = true
            defer { state.onCancel = [] }
            return state.onCancel
        }
        for handler in handlers { handler() }
    }

    /// The client went away while the request waited: it is answered (499, which no one reads)
    /// so that its connection is resumed and closed, and the work is told to stop — unless the
    /// work is finishing (its answer comes in a moment, and nowhere).
    func clientWentAway() {
        answer(Self.clientGone, unlessClaimed: false, unlessFinishing: true, cancelling: true)
    }

    /// What a request whose client went away is answered: nginx's 499, for the access log.
    static let clientGone = Response.error(
        HTTPError(HTTPStatus(rawValue: 499), "the client closed the connection; nothing was done"), for: nil)

    /// Answers the request with `response`; the first answer wins, later ones are dropped. Safe
    /// from any thread, also after the client went away.
    public func fulfil(_ response: Response) {
        answer(response, unlessClaimed: false)
    }

    /// Answers with `response` unless the work claimed the answer (`unlessClaimed`), is
    /// committing its outcome (`unlessFinishing`), or it was given; true when this answered.
    /// With `cancelling`, an answer given also tells the work to stop (`cancel`), before the
    /// connection is resumed: whoever sees the request answered (it leaves the server's waiting
    /// requests once its connection is resumed) finds its work told already — a queued job is
    /// then dropped unrun, not taken by a thread that found it not cancelled yet.
    ///
    /// The connection is resumed after the lock is let go: resuming wakes the server's thread,
    /// which on a busy core takes over at once and, finding the lock held, had to wait for this
    /// thread to be scheduled again — two futex calls and two context switches per deferred
    /// answer (strace, the Performance article). Nothing else can resume or free the connection
    /// meanwhile: it stays suspended (libmicrohttpd neither polls nor times out a suspended
    /// connection) until this resume, and `resuming` keeps `detach` and the server's shutdown
    /// waiting for it (`waitUntilResumed`).
    @discardableResult
    func answer(
        _ response: Response, unlessClaimed: Bool, unlessFinishing: Bool = false, cancelling: Bool = false
    ) -> Bool {
        typealias Outcome = (
            answered: Bool, resume: LoopConnection?, wake: EventLoop?,
            forward: (to: PendingResponse, headers: HTTPHeaders)?, waiter: Condition?,
            cancelHandlers: [@Sendable () -> Void]
        )
        let (answered, resume, wake, forward, waiter, cancelHandlers) = state.withLock { state -> Outcome in
            switch state.phase {
            case .waiting: break
            case .claimed: if unlessClaimed { return (false, nil, nil, nil, nil, []) }
            case .finishing: if unlessClaimed || unlessFinishing { return (false, nil, nil, nil, nil, []) }
            case .answered, .taken: return (false, nil, nil, nil, nil, [])
            }
            var cancelHandlers: [@Sendable () -> Void] = []
            if cancelling && !state.cancelled {
                state.cancelled = true
                cancelHandlers = state.onCancel
                state.onCancel = []
            }
            state.phase = .answered(response)
            given.store(true, ordering: .releasing)
            let wake = state.loop
            state.loop = nil
            var resume: LoopConnection?
            if state.suspended, let connection = state.connection {
                state.suspended = false
                state.resuming = true
                resume = connection
            }
            return (true, resume, wake, state.forward, state.waiter, cancelHandlers)
        }
        for handler in cancelHandlers { handler() }
        wake?.wakeForAnswer()
        if let resume {
            // In a batch (the store writer answering a transaction's requests) the connections are
            // resumed together at its end; else at once.
            if !Resumptions.shared.add(resume, of: self) {
                resume.resume()
                state.withLock { $0.resuming = false }
            }
        }
        if let waiter {
            // A thread waiting without a connection (in process): woken holding its lock, so the
            // wake-up cannot fall between its check and its wait.
            waiter.lock()
            waiter.broadcast()
            waiter.unlock()
        }
        if let forward { forward.to.fulfil(response.adding(forward.headers)) }
        return answered
    }

    /// Answers `outer` with this answer (with the fields of `headers` it does not carry added)
    /// once it is given — at once when it was: for a handler's deferred response that another
    /// deferred answer must wait for (the handler ran while that one was waiting already).
    public func forward(to outer: PendingResponse, adding headers: HTTPHeaders) {
        let given = state.withLock { state -> Response? in
            if case .answered(let response) = state.phase { return response }
            state.forward = (outer, headers)
            return nil
        }
        if let given { outer.fulfil(given.adding(headers)) }
    }

    /// Whether an answer was given (maybe taken already): a cheap look, without the lock, for a
    /// parked request called again (`answerOrWait` then takes it).
    var hasAnswer: Bool { given.load(ordering: .acquiring) }

    /// What the access handler does about a deferred answer.
    enum Wait {
        /// Send this answer.
        case answer(Response)
        /// Wait, parked on the loop given (called again at its next turn).
        case parked
        /// Wait, the connection suspended until the answer comes.
        case suspended
    }

    /// Called by the server in the access handler, on `loop`'s thread (`nil`: park nowhere): the
    /// answer if it is there already; else the request waits, parked on `loop` when the answer is
    /// brief, its connection suspended otherwise.
    func answerOrWait(_ connection: OpaquePointer, on loop: EventLoop?) -> Wait {
        let wait = state.withLock { state -> Wait in
            if case .answered(let response) = state.phase {
                state.phase = .taken
                state.connection = nil
                return .answer(response)
            }
            if isBrief, let loop {
                state.loop = loop
                return .parked
            }
            let suspended = LoopConnection(connection)
            state.connection = suspended
            state.suspended = true
            suspended.suspend()
            return .suspended
        }
        // A connection resumed at the end of a batch: this server thread resumes the batch's others.
        if case .answer = wait { Resumptions.shared.resumeAll() }
        return wait
    }

    /// Marks the connection resumed (by `Resumptions`).
    func resumed() { state.withLock { $0.resuming = false } }

    /// Waits on the calling thread, at most `milliseconds`, for the answer, and takes it; `nil` when
    /// none came in time. For a request answered without a connection (see
    /// `HTTPServer.respondInProcess`), where there is nothing to suspend.
    func waitForAnswer(milliseconds: Int) -> Response? {
        let waiter = Condition()
        waiter.lock()
        defer { waiter.unlock() }
        state.withLock { $0.waiter = waiter }
        let deadline = Clock.monotonicMicros() + milliseconds * 1000
        while true {
            // Checked holding the waiter's lock: an answer given after the check broadcasts only
            // once this thread waits, so it is not missed.
            let answer = state.withLock { state -> Response? in
                guard case .answered(let response) = state.phase else { return nil }
                state.phase = .taken
                state.waiter = nil
                return response
            }
            if let answer { return answer }
            let left = deadline - Clock.monotonicMicros()
            if left <= 0 {
                state.withLock { $0.waiter = nil }
                return nil
            }
            waiter.wait(milliseconds: max(1, left / 1000))
        }
    }

    /// Returns once no `answer` is resuming the connection (at most about a second): before
    /// libmicrohttpd stops, which it must not do with a connection still suspended.
    func waitUntilResumed() {
        for _ in 0..<10_000 {
            guard state.withLock({ $0.resuming }) else { return }
            usleep(100)
        }
    }

    /// The request completed (sent, or the connection closed): never resume its connection. The
    /// work, if it still runs, is told to stop (its answer has nowhere to go).
    func detach() {
        let unanswered = state.withLock { state -> Bool in
            state.connection = nil
            state.suspended = false
            state.loop = nil
            switch state.phase {
            case .waiting, .claimed, .finishing: return true
            case .answered, .taken: return false
            }
        }
        // It may have been the connection a batch resumed first: the others must not wait for it.
        Resumptions.shared.resumeAll()
        if unanswered { cancel() }
    }
}

extension Response {
    /// A response answered later through `pending` (see `PendingResponse`); its header fields
    /// are added to that answer.
    public static func deferred(_ pending: PendingResponse, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        Response(status: .ok, headers: headers, body: .deferred(pending))
    }
}
