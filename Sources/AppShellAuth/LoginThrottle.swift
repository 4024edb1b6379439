import AppShellConcurrency
import Glibc

/// The login rate-limiting policy: which failures block which attempts.
///
/// Failures are counted, over a sliding window, per key of four kinds, and every admitted attempt
/// per client network; an attempt is refused (before its password is checked) while any of its
/// keys has reached its limit:
///
/// | key | default | stops |
/// | --- | --- | --- |
/// | the session | 5 a minute | one browser guessing, whatever its address |
/// | the username and the client | 5 a minute | one client guessing one account |
/// | the client | 20 a minute | one client trying many accounts (password spraying) |
/// | the username, from any client | 20 a minute | many clients guessing one account |
/// | the client's network (/24, /64): every attempt admitted | 60 a minute | one network keeping the checks busy |
///
/// The client is its IP address, an IPv6 address by its /64 (a host picks addresses freely
/// inside its /64). A client adds at most 5 failures a minute to a username (its own pair
/// limit), so blocking a username needs several clients at once; and even then the username is
/// only blocked for clients that have not logged in as that user recently (the last
/// `knownClientsPerUser` clients that succeeded, for `knownClientSeconds`): the real user's
/// usual networks keep working while someone else guesses — and their own attempts do not count
/// against the username: a client that logged in, logging in again many times at once (each
/// attempt counts until its check is done), would otherwise block every other client of that
/// user (issue 31, finding 3). A success clears the session's and
/// the pair's failures, never the client's or the username's (else one valid account would
/// reset the count between guesses at others). Memory is bounded: each limiter tracks at most
/// `maxTrackedKeys` keys, and clients are remembered only for usernames that logged in.
package final class LoginThrottle: Sendable {
    /// The limits: failures allowed per key within `windowSeconds`.
    package struct Policy: Sendable, Equatable {
        /// Failures per session.
        package var perSession = 5
        /// Failures per (username, client) pair.
        package var perUsernameAndClient = 5
        /// Failures per client, whatever the username.
        package var perClient = 20
        /// Failures per username from all clients that have not logged in as that user recently.
        package var perUsername = 20
        /// Attempts admitted per client network (an IPv4 /24, an IPv6 /64) whatever their outcome
        /// — successes and attempts refused later included (0: no limit): a valid password must not
        /// let a client keep the password checks busy for free.
        package var attemptsPerNetwork = 60
        /// The sliding window, in seconds.
        package var windowSeconds: Int64 = 60
        /// How many recent clients are remembered per username after a success.
        package var knownClientsPerUser = 8
        /// How long a client that logged in stays known for that username, in seconds.
        package var knownClientSeconds: Int64 = 30 * 86_400

        /// The defaults.
        package init() {}
    }

    /// One login attempt, named by what it is counted against.
    package struct Attempt: Sendable {
        let session: String
        let pair: String
        let client: String
        /// The username the attempt logs in as.
        package let username: String
        /// The client's address as given (the limits count an IPv6 client by its /64).
        package let clientAddress: String
        /// The client's network, which `attemptsPerNetwork` counts.
        let network: String
        /// Whether the attempt counts against its username: set by `admit`, false for a client
        /// that logged in as that user recently.
        package internal(set) var countsForUsername = true

        /// An attempt by `sessionKey` (any string naming the session) from `clientAddress`
        /// (IPv4 or IPv6 text) to log in as `username`.
        package init(sessionKey: String, username: String, clientAddress: String) {
            let client = LoginThrottle.clientKey(for: clientAddress)
            session = sessionKey
            self.client = client
            // The username is length-prefixed so that no username can forge another pair's key.
            pair = "\(username.utf8.count):\(username)@\(client)"
            self.username = username
            self.clientAddress = clientAddress
            network = PasswordCheckQuota.network(of: clientAddress)
        }
    }

    private let policy: Policy
    private let sessions: LoginRateLimiter
    private let pairs: LoginRateLimiter
    private let clients: LoginRateLimiter
    private let usernames: LoginRateLimiter
    /// Admitted attempts per client network (never taken back); `nil` without that limit.
    private let networks: LoginRateLimiter?
    private let clock: @Sendable () -> Int64
    /// Makes `admit`'s check and count one step across the four limiters.
    private let admission = Locked(())
    /// Username → the clients that logged in as it, most recent last, with when.
    private let known = Locked<[String: [(client: String, at: Int64)]]>([:])

    /// A throttle with `policy`; `clock` returns seconds and is replaceable for tests.
    package init(
        policy: Policy = Policy(), maxTrackedKeys: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }
    ) {
        self.policy = policy
        self.clock = clock
        func limiter(_ limit: Int) -> LoginRateLimiter {
            LoginRateLimiter(
                maxFailures: limit, window: policy.windowSeconds, maxTrackedKeys: maxTrackedKeys, clock: clock)
        }
        sessions = limiter(policy.perSession)
        pairs = limiter(policy.perUsernameAndClient)
        clients = limiter(policy.perClient)
        usernames = limiter(policy.perUsername)
        networks = policy.attemptsPerNetwork > 0 ? limiter(policy.attemptsPerNetwork) : nil
    }

    /// Seconds until `attempt` may be tried; 0 when it may be tried now. Ask before checking the
    /// password, so that a blocked attacker does not even spend the server's hashing time.
    package func secondsUntilAllowed(_ attempt: Attempt) -> Int64 {
        var wait = max(
            sessions.secondsUntilUnblocked(keys: [attempt.session]),
            pairs.secondsUntilUnblocked(keys: [attempt.pair]),
            clients.secondsUntilUnblocked(keys: [attempt.client]),
            networks?.secondsUntilUnblocked(keys: [attempt.network]) ?? 0)
        if !isKnown(attempt) {
            wait = max(wait, usernames.secondsUntilUnblocked(keys: [attempt.username]))
        }
        return wait
    }

    /// The limits `attempt` has reached (`session`, `username and client`, `client`, `username`),
    /// the ones that refuse it now; empty when it may be tried. For logging a lockout.
    package func reachedLimits(_ attempt: Attempt) -> [String] {
        var reached: [String] = []
        if sessions.isBlocked(keys: [attempt.session]) { reached.append("session") }
        if pairs.isBlocked(keys: [attempt.pair]) { reached.append("username and client") }
        if clients.isBlocked(keys: [attempt.client]) { reached.append("client") }
        if networks?.isBlocked(keys: [attempt.network]) == true { reached.append("client network") }
        if !isKnown(attempt) && usernames.isBlocked(keys: [attempt.username]) { reached.append("username") }
        return reached
    }

    /// Admits `attempt` to have its password checked when none of its keys is at its limit, and
    /// counts it as a failure in the same step; returns 0 when admitted, else the seconds to wait.
    /// An attempt is counted while it is being checked, not only once it failed: attempts checked
    /// at the same time (many sessions of one client, each on its own thread) count against each
    /// other, so a burst of them cannot pass the limits together. Report its outcome with
    /// `recordOutcome`, or `withdraw` it when its password will never be checked.
    package func admit(_ attempt: inout Attempt) -> Int64 {
        attempt.countsForUsername = !isKnown(attempt)
        return admission.withLock { [attempt] _ in
            let wait = secondsUntilAllowed(attempt)
            if wait == 0 {
                recordFailure(attempt)
                // Counted whatever the outcome: never taken back.
                networks?.recordFailure(keys: [attempt.network])
            }
            return wait
        }
    }

    /// The outcome of an admitted attempt's check: a failure stays counted; a success takes back
    /// the count `admit` made and is recorded as `recordSuccess` records it.
    package func recordOutcome(_ attempt: Attempt, succeeded: Bool) {
        guard succeeded else { return }
        withdraw(attempt)
        recordSuccess(attempt)
    }

    /// Takes back the count of an admitted attempt whose password will never be checked (the
    /// queue of checks was full).
    package func withdraw(_ attempt: Attempt) {
        sessions.withdrawFailure(keys: [attempt.session])
        pairs.withdrawFailure(keys: [attempt.pair])
        clients.withdrawFailure(keys: [attempt.client])
        if attempt.countsForUsername { usernames.withdrawFailure(keys: [attempt.username]) }
    }

    /// Counts a wrong password (or unknown username) against every key of `attempt`.
    package func recordFailure(_ attempt: Attempt) {
        sessions.recordFailure(keys: [attempt.session])
        pairs.recordFailure(keys: [attempt.pair])
        clients.recordFailure(keys: [attempt.client])
        if attempt.countsForUsername { usernames.recordFailure(keys: [attempt.username]) }
    }

    /// Records a successful login: the session's and the pair's failures are forgotten, and the
    /// client becomes known for the username.
    package func recordSuccess(_ attempt: Attempt) {
        sessions.reset(keys: [attempt.session])
        pairs.reset(keys: [attempt.pair])
        let now = clock()
        known.withLock { known in
            var clients = known[attempt.username, default: []].filter {
                $0.client != attempt.client && now - $0.at < policy.knownClientSeconds
            }
            clients.append((attempt.client, now))
            known[attempt.username] = Array(clients.suffix(policy.knownClientsPerUser))
        }
    }

    private func isKnown(_ attempt: Attempt) -> Bool {
        let now = clock()
        return known.withLock { known in
            known[attempt.username]?.contains { $0.client == attempt.client && now - $0.at < policy.knownClientSeconds }
                ?? false
        }
    }

    /// The key of a client address: an IPv4 address as it is, an IPv6 address by its /64
    /// (`2001:db8:1:2::/64`), an IPv4-mapped IPv6 address as IPv4; other text as it is.
    package static func clientKey(for address: String) -> String {
        var ipv6 = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, address, &ipv6) == 1 else { return address }
        var bytes = withUnsafeBytes(of: ipv6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        for index in 8..<16 { bytes[index] = 0 }
        var network = in6_addr()
        withUnsafeMutableBytes(of: &network) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        _ = inet_ntop(AF_INET6, &network, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
    }
}
