import AppShellConcurrency
import Glibc

/// The open connections of each client address, across all of the server's event loops, and
/// the limit on them (`HTTPServerConfiguration.maxConnectionsPerIP`).
///
/// libmicrohttpd counts per daemon, and each event loop has a daemon of its own: counted there,
/// a client could open the limit once per loop.
final class ConnectionsPerAddress: Sendable {
    private let limit: Int
    private let counts = Locked<[IPAddress: Int]>([:])

    /// Counts against `limit` connections per address (0: no limit, nothing counted).
    init(limit: Int) { self.limit = limit }

    /// The address `address` (a `sockaddr_in` or `sockaddr_in6`) counts under, or `nil`.
    static func key(_ address: UnsafePointer<sockaddr>?) -> IPAddress? {
        guard let address else { return nil }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { IPAddress($0.pointee.sin_addr) }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { IPAddress($0.pointee.sin6_addr) }
        default: return nil
        }
    }

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
