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
            let open = try opened(&connection)
            do throws(StoreError) {
                return try open.pipeline(commands)
            } catch {
                throw .broken(error)
            }
        }
    }

    /// Sends each node of `work` (distinct nodes) its commands, all of them before any reply is
    /// read — one round trip for all the nodes at once — and returns each node's replies or
    /// failure, in `work`'s order. The nodes' locks are taken in the order of their names, so
    /// that two threads holding several never wait for each other. A script the node lost
    /// (`NOSCRIPT`) is its reply here: the caller loads it.
    static func pipelines(_ work: [(node: RedisClusterNode, commands: [[[UInt8]]])]) -> [Result<[RedisReply], Failure>]
    {
        var results = [Result<[RedisReply], Failure>](repeating: .success([]), count: work.count)
        var open = [RedisConnection?](repeating: nil, count: work.count)
        let order = work.indices.sorted { work[$0].node.name < work[$1].node.name }
        locked(order[...], work, &open, &results) { open, results in
            for index in work.indices {
                guard let connection = open[index] else { continue }
                do throws(StoreError) {
                    try connection.sendWithoutWaiting(work[index].commands)
                } catch {
                    results[index] = .failure(.broken(error))
                    open[index] = nil
                }
            }
            for index in work.indices {
                guard let connection = open[index] else { continue }
                do throws(StoreError) {
                    var replies: [RedisReply] = []
                    replies.reserveCapacity(work[index].commands.count)
                    for _ in work[index].commands { replies.append(try connection.receive()) }
                    results[index] = .success(replies)
                } catch {
                    results[index] = .failure(.broken(error))
                }
            }
        }
        return results
    }

    /// Takes the lock of each node of `order` in turn, opens its connection (or records its
    /// failure), and runs `body` holding them all.
    private static func locked(
        _ order: ArraySlice<Int>, _ work: [(node: RedisClusterNode, commands: [[[UInt8]]])],
        _ open: inout [RedisConnection?], _ results: inout [Result<[RedisReply], Failure>],
        _ body: (inout [RedisConnection?], inout [Result<[RedisReply], Failure>]) -> Void
    ) {
        guard let index = order.first else { return body(&open, &results) }
        let node = work[index].node
        node.connection.withLock { connection in
            do throws(Failure) {
                open[index] = try node.opened(&connection)
            } catch {
                results[index] = .failure(error)
            }
            locked(order.dropFirst(), work, &open, &results, body)
        }
    }

    /// The connection, made when there is none, and connected: throws `unreachable` when it
    /// cannot be (nothing was sent), `broken` when the node was closed for good.
    private func opened(_ connection: inout RedisConnection?) throws(Failure) -> RedisConnection {
        // Closed for good: no retry elsewhere either.
        if connection == nil, closed.withLock({ $0 }) { throw .broken(StoreError("store \(url): closed")) }
        do throws(StoreError) {
            if let connection {
                try connection.connectIfNeeded()
                return connection
            }
            let made = try RedisConnection(url: url, timeoutMilliseconds: timeoutMilliseconds, scripts: scripts)
            connection = made
            return made
        } catch {
            throw .unreachable(error)
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
