import AppShellConcurrency
import Glibc
import Synchronization

/// How many password checks each client network may have queued or running at once, so that no
/// client fills the queue of checks that every user's login waits in.
///
/// DESIGN: a user with a valid password logging in from four addresses, 22 attempts in flight
/// each, kept the queue (64) full: every other login got 503 (issue 31, finding 3). Successful
/// attempts cost an attacker nothing against the failure limits, so the queue needs a bound of
/// its own per client. A client is its network — an IPv4 address's /24, an IPv6 address's /64 —
/// since addresses next to each other are one attacker's as easily as one. With a few checks per
/// network the queue takes at least `queueLimit / perClient` networks to fill, and a check waits
/// behind at most that many others' few; queued in its network's lane (`Place.network`, see
/// `WorkerPool.reserve(lane:)`), it waits behind at most one of each. Behind a reverse proxy the
/// client is the address the trusted proxy reports (`Request.clientAddress`).
package final class PasswordCheckQuota: Sendable {
    /// Checks queued or running at most per client network.
    package let perClient: Int
    private let inFlight = Locked<[String: Int]>([:])

    /// A quota of `perClient` checks (at least 1) per client network.
    package init(perClient: Int) { self.perClient = max(1, perClient) }

    /// A place a check holds in its network's quota: given back by `giveBack` as soon as the
    /// check ran, or when it is let go of — whatever becomes of the check (run, refused, dropped
    /// with the request that would have queued it), the place cannot be kept by mistake.
    package final class Place: Sendable {
        private let quota: PasswordCheckQuota
        /// The client network the place counts against (`PasswordCheckQuota.network(of:)`): the
        /// lane its check waits in.
        package let network: String

        private let given = Atomic<Bool>(false)

        fileprivate init(_ quota: PasswordCheckQuota, _ network: String) {
            self.quota = quota
            self.network = network
        }

        /// Gives the place back (once; later calls do nothing). Call it when the check ran,
        /// before its answer is sent: the closure that holds the place may outlive the answer, and
        /// a client that logs in again at once must find its place free.
        package func giveBack() {
            guard !given.exchange(true, ordering: .acquiringAndReleasing) else { return }
            quota.release(network)
        }

        /// Whether the place was given back: its check ran, or was dropped.
        package var isGivenBack: Bool { given.load(ordering: .acquiring) }

        deinit { giveBack() }
    }

    /// A place for a check of `clientAddress`'s network; `nil` when it has `perClient` checks
    /// queued or running already. Keep the place with the check (in its job) until it ended.
    package func take(for clientAddress: String) -> Place? {
        let network = Self.network(of: clientAddress)
        let taken = inFlight.withLock { inFlight -> Bool in
            let taken = inFlight[network, default: 0]
            guard taken < perClient else { return false }
            inFlight[network] = taken + 1
            return true
        }
        return taken ? Place(self, network) : nil
    }

    private func release(_ network: String) {
        inFlight.withLock { inFlight in
            guard let taken = inFlight[network] else { return }
            inFlight[network] = taken > 1 ? taken - 1 : nil
        }
    }

    /// Checks queued or running now for `clientAddress`'s network.
    package func checks(for clientAddress: String) -> Int {
        let network = Self.network(of: clientAddress)
        return inFlight.withLock { $0[network, default: 0] }
    }

    /// The network a client address counts as: an IPv4 address's /24 (`192.0.2.0/24`, also for an
    /// IPv4-mapped IPv6 address), an IPv6 address's /64 (as `LoginThrottle.clientKey` writes it);
    /// other text as it is.
    package static func network(of address: String) -> String {
        let key = LoginThrottle.clientKey(for: address)
        var ipv4 = in_addr()
        guard inet_pton(AF_INET, key, &ipv4) == 1 else { return key }
        let host = UInt32(bigEndian: ipv4.s_addr)
        return "\(host >> 24).\((host >> 16) & 0xFF).\((host >> 8) & 0xFF).0/24"
    }
}
