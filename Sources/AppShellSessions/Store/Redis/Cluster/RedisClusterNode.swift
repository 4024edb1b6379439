import AppShellConcurrency

/// A node of a Redis Cluster and the one connection `RedisCluster` keeps to it, opened at its
/// first use and again after a failure.
///
/// The connection is used under a lock held for one round trip, as the single-server backend
/// holds its `Locked<RedisConnection>`: a node's commands from several threads queue there.
final class RedisClusterNode: @unchecked Sendable {
    // @unchecked: `connection` is used under its lock only.

    /// Why a round trip failed.
    enum Failure: Error {
        /// The node could not be reached: nothing was sent, the commands may be sent elsewhere.
        case unreachable(StoreError)
        /// The connection failed after the commands were sent: their effect is unknown.
        case broken(StoreError)

        /// The store's error, whichever the failure.
        var storeError: StoreError {
            switch self {
            case .unreachable(let error), .broken(let error): error
            }
        }
    }

    /// `host:port`, as `MOVED` and `ASK` name the node.
    let name: String
    /// The node's URL (the cluster's credentials, database 0).
    let url: RedisURL
    /// How long a connect or a round trip may take.
    private let timeoutMilliseconds: Int
    /// The scripts the connection loads.
    private let scripts: [RedisScript]
    /// The connection, once made; used under this lock for a whole round trip.
    private let connection = Locked<RedisConnection?>(nil)
    /// Whether `close` was called.
    private let closed = Locked(false)

    /// The node at `url` (a `.tcp` one), whose commands wait `timeoutMilliseconds` at most and
    /// call `scripts` (loaded when the connection is made).
    init(url: RedisURL, timeoutMilliseconds: Int, scripts: [RedisScript] = []) {
        self.url = url
        self.timeoutMilliseconds = timeoutMilliseconds
        self.scripts = scripts
        if case .tcp(let host, let port) = url.address {
            name = RedisClusterNode.name(host: host, port: port)
        } else {
            name = url.description
        }
    }

    /// How `MOVED` names the node at `host`:`port`.
    static func name(host: some StringProtocol, port: Int) -> String {
        (host.contains(":") ? "[" + host + "]" : String(host)) + ":" + String(port)
    }

    /// Sends `commands` and returns their replies: one round trip.
    func pipeline(_ commands: [[[UInt8]]]) throws(Failure) -> [RedisReply] {
        try connection.withLock { connection throws(Failure) -> [RedisReply] in
            let open: RedisConnection
            // Closed for good: no retry elsewhere either.
            if connection == nil, closed.withLock({ $0 }) { throw .broken(StoreError("store \(url): closed")) }
            do throws(StoreError) {
                if let connection {
                    try connection.connectIfNeeded()
                    open = connection
                } else {
                    open = try RedisConnection(url: url, timeoutMilliseconds: timeoutMilliseconds, scripts: scripts)
                    connection = open
                }
            } catch {
                throw .unreachable(error)
            }
            do throws(StoreError) {
                return try open.pipeline(commands)
            } catch {
                throw .broken(error)
            }
        }
    }

    /// Closes the connection for good: later commands fail as `unreachable`.
    func close() {
        closed.withLock { $0 = true }
        connection.withLock { connection in
            connection?.close()
            connection = nil
        }
    }
}
