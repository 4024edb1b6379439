import AppShellConcurrency

/// The open connections of each client address, across all of the server's event loops, and
/// the limit on them (`HTTPServerConfiguration.maxConnectionsPerIP`). Callers count a client by
/// `IPAddress.client`: an IPv6 peer by its /64.
///
/// libmicrohttpd counts per daemon, and each event loop has a daemon of its own: counted there,
/// a client could open the limit once per loop.
final class ConnectionsPerAddress: Sendable {
    private let limit: Int
    private let counts = Locked<[IPAddress: Int]>([:])

    /// Counts against `limit` connections per address (0: no limit, nothing counted).
    init(limit: Int) { self.limit = limit }

    /// Counts a new connection from `address`; false, counting nothing, when that address has
    /// `limit` open already.
    func admit(_ address: IPAddress?) -> Bool {
        guard limit > 0, let address else { return true }
        return counts.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limit else { return false }
            counts[address] = open + 1
            return true
        }
    }

    /// Uncounts a connection from `address` that `admit` counted.
    func release(_ address: IPAddress?) {
        guard limit > 0, let address else { return }
        counts.withLock { counts in
            guard let open = counts[address] else { return }
            counts[address] = open > 1 ? open - 1 : nil
        }
    }
}
