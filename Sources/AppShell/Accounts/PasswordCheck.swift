import AppShellAuth
import AppShellHTTP

/// What a password's slow work came to, for the login throttle.
enum CheckOutcome: Sendable {
    /// The password was right (or the account made): the attempt's count is taken back.
    case succeeded
    /// The password was wrong (or the name taken): the attempt stays counted, and is logged.
    case failed
    /// Nothing was checked (the store could not be reached): the attempt's count is taken back.
    case notChecked
}

/// What checking a password found.
enum PasswordVerdict: Sendable {
    /// The password is the account's (and what followed it was done).
    case right
    /// It is not, or there is no such account.
    case wrong
    /// The store could not be read or written: nothing was checked.
    case unavailable

    /// The verdict of `check`: `unavailable` when it throws.
    init(_ check: () throws(StoreError) -> Bool) {
        do throws(StoreError) {
            self = try check() ? .right : .wrong
        } catch {
            Logger.appshell.error("accounts: \(error)")
            self = .unavailable
        }
    }

    /// What it comes to for the throttle.
    var outcome: CheckOutcome {
        switch self {
        case .right: .succeeded
        case .wrong: .failed
        case .unavailable: .notChecked
        }
    }

    /// The answer when the store could not be reached.
    static let unavailableError = ActionError(
        status: 503, "The accounts cannot be read right now; nothing was changed. Try again in a moment.",
        retryAfterSeconds: 1)
}

extension CredentialError {
    /// The error as a sentence for the screen: capitalised, with a full stop.
    var sentence: String { description.prefix(1).uppercased() + description.dropFirst() + "." }
}

/// The way every password's slow work (an Argon2id check or hash: a login, a sign-up, a
/// password change) is let in: counted as a login attempt by the throttle, given a place among its
/// client network's checks, run on the password-check threads with no lock held while the request
/// waits, and finished under the session's lock.
extension Accounts {
    /// Admits an attempt of `username` from `clientAddress` on the session named by `sessionKey`,
    /// then runs `work` on the password-check threads and `finish` with its result under the
    /// session's lock (`RootController.finishLater`). `outcome` tells the throttle what the work
    /// came to (a failure stays counted, and is logged; a success takes its count back, as does
    /// work that checked nothing: the store could not be reached); `busy` says the flow has a
    /// check under way already (one at a time per session: its attempts stay counted one after
    /// another).
    ///
    /// Returns the check's place among its network's: the check's task holds it until it ends
    /// (answered, or cancelled because its client went away), so a flow that keeps it weakly
    /// (`busy` is then whether it is still there) is free again exactly when the check is over.
    ///
    /// Throws, having queued nothing and counted nothing, when the attempt is refused: 429 with
    /// `Retry-After` past the throttle's limits, with a check under way, or with the network's
    /// checks all taken; 503 when the threads' queue is full.
    @discardableResult
    func runCheck<Result: Sendable>(
        on root: RootController, sessionKey: String, username: String, clientAddress: String, busy: Bool,
        work: @escaping @Sendable () -> Result, outcome: @escaping @Sendable (Result) -> CheckOutcome,
        then finish: @escaping @Sendable (RootController, Result) throws(ActionError) -> Void
    ) throws(ActionError) -> PasswordCheckQuota.Place {
        var admitted = LoginThrottle.Attempt(sessionKey: sessionKey, username: username, clientAddress: clientAddress)
        // Admitted attempts count at once (as failures until their check says otherwise), so
        // that checks running at the same time count against each other.
        let wait = throttle.admit(&admitted)
        let attempt = admitted
        guard wait == 0 else {
            throw ActionError(
                status: 429, "Too many failed logins. Try again in a minute.", retryAfterSeconds: Int(wait))
        }
        guard !busy else {
            throttle.withdraw(attempt)
            throw ActionError(
                status: 429, "A login is already being checked. Wait for its answer.", retryAfterSeconds: 1)
        }
        // A few checks at a time per client network: no client fills the queue every login waits in.
        guard let place = checkQuota.take(for: clientAddress) else {
            throttle.withdraw(attempt)
            throw ActionError(
                status: 429, "Too many logins from your network are being checked. Wait for their answers.",
                retryAfterSeconds: 1)
        }
        // The check keeps its place until it has run, or until it is dropped unrun; it waits in
        // its network's lane, served in turns with the others'. Its outcome is counted as soon as
        // it is known, whatever happens to the session meanwhile.
        let queued = root.finishLater(on: passwordChecks, lane: place.network) {
            let result = work()
            // Free before the answer: the client may try again as soon as it has it.
            place.giveBack()
            return result
        } settle: { [throttle] result in
            // At normal priority, off the pool's thread: other logins take the throttle's lock.
            switch outcome(result) {
            case .succeeded: throttle.recordOutcome(attempt, succeeded: true)
            case .failed: Accounts.logFailure(attempt, throttle)
            case .notChecked: throttle.withdraw(attempt)
            }
        } then: { root, result throws(ActionError) in
            try finish(root, result)
        }
        guard queued else {
            throttle.withdraw(attempt)
            throw ActionError(
                status: 503, "The server is busy checking other logins. Try again in a moment.", retryAfterSeconds: 1)
        }
        return place
    }

    /// Logs a failed attempt, and the lockout it caused when it made the attempt's keys reach a
    /// limit (later attempts are refused before any check, and not logged one by one): the
    /// username and the client, never the password.
    private static func logFailure(_ attempt: LoginThrottle.Attempt, _ throttle: LoginThrottle) {
        AccessLog.security("login failed", ["username": attempt.username, "client": attempt.clientAddress])
        let reached = throttle.reachedLimits(attempt)
        guard !reached.isEmpty else { return }
        AccessLog.security(
            "login lockout",
            [
                "username": attempt.username, "client": attempt.clientAddress,
                "limits": reached.joined(separator: ", "),
            ])
    }
}
