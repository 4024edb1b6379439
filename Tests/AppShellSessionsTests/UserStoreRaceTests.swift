import AppShellConcurrency
import AppShellSessions
import DefaultsBackendTestSupport
import Foundation
import Testing

/// Two clients of one user writing the user's store at once — two sessions on one instance, or
/// on two instances sharing Redis — each reading it, adding to it and writing it with its
/// session's save through a store writer, again when the write meets a conflict: nothing any of
/// them wrote is lost.
@Suite struct UserStoreRaceTests {
    static let user = "ann"

    /// Runs `body` with the two clients' backends: one backend for both (memory, one SQLite file),
    /// or two instances of the Redis backend on one server, or on one cluster.
    static func withClients(
        _ kind: BackendKind, _ body: (any DefaultsBackend, any DefaultsBackend) throws -> Void
    )
        throws
    {
        switch kind {
        case .memory, .sqlite:
            try kind.withBackend { backend throws in try body(backend, backend) }
        case .redis:
            let server = try RedisTestServer.shared()
            let prefix = RedisTestServer.uniquePrefix()
            let first = try RedisDefaultsBackend(url: server.url, keyPrefix: prefix)
            defer { first.close() }
            let second = try RedisDefaultsBackend(url: server.url, keyPrefix: prefix)
            defer { second.close() }
            try body(first, second)
        case .redisCluster:
            let cluster = try RedisClusterTests.shared.get()
            let prefix = RedisTestServer.uniquePrefix()
            let first = try RedisDefaultsBackend(url: cluster.url, keyPrefix: prefix)
            defer { first.close() }
            let second = try RedisDefaultsBackend(url: cluster.url, keyPrefix: prefix)
            defer { second.close() }
            try body(first, second)
        }
    }

    /// Adds the keys `<name>0` … to the user's store, one read-modify-write each, saved with the
    /// session `id`'s record through `writer`; returns how many writes met a conflict.
    static func append(
        _ count: Int, named name: String, session id: SessionID, backend: any DefaultsBackend, writer: StoreWriter
    ) throws -> Int {
        var conflicts = 0
        for index in 0..<count {
            while true {
                let store = try backend.userStore(of: user)
                var values = store.values
                values["\(name)\(index)"] = .integer(index)
                var record = SessionRecord(values: ["last": .integer(index)], created: 1, accessed: 1)
                record.user = user
                record.userWrite = UserWrite(user: user, values: values, expectedVersion: store.version)
                let done = DispatchSemaphore(value: 0)
                let outcome = Locked<StoreError?>(nil)
                let queued = writer.submit(.save(id, record)) { error in
                    outcome.withLock { $0 = error }
                    done.signal()
                }
                guard queued else { throw StoreError("the writer's queue is full") }
                done.wait()
                guard let error = outcome.withLock({ $0 }) else { break }
                guard error.isConflict else { throw error }
                conflicts += 1
            }
        }
        return conflicts
    }

    @Test(arguments: BackendKind.allCases)
    func twoClientsOfOneUserLoseNothing(kind: BackendKind) throws {
        let perClient = 60
        try Self.withClients(kind) { first, second throws in
            let writers = [StoreWriter(backend: first, queueLimit: 16), StoreWriter(backend: second, queueLimit: 16)]
            defer { for writer in writers { writer.stop() } }
            let backends = [first, second]
            let ids = [SessionID.random(), SessionID.random()]
            let results = Locked<[String]>([])
            let conflicts = Locked(0)
            let group = DispatchGroup()
            for client in 0..<2 {
                group.enter()
                // Real threads: both clients inside the store at once.
                Thread {
                    defer { group.leave() }
                    do {
                        let met = try Self.append(
                            perClient, named: "client\(client)-", session: ids[client], backend: backends[client],
                            writer: writers[client])
                        conflicts.withLock { $0 += met }
                    } catch {
                        results.withLock { $0.append("client \(client): \(error)") }
                    }
                }.start()
            }
            group.wait()
            #expect(results.withLock { $0 } == [])
            let store = try first.userStore(of: Self.user)
            var expected: [String: DefaultsValue] = [:]
            for client in 0..<2 {
                for index in 0..<perClient { expected["client\(client)-\(index)"] = .integer(index) }
            }
            // Named rather than compared whole: a failure says which writes were lost.
            let lost = expected.keys.filter { store.values[$0] != expected[$0] }.sorted()
            #expect(lost == [])
            #expect(store.values.count == expected.count)
            // One version per write that held: every refused write made nothing.
            #expect(store.version == Int64(2 * perClient))
            #expect(try second.userStore(of: Self.user) == store)
            for (client, id) in ids.enumerated() {
                #expect(try first.load(id)?.values == ["last": .integer(perClient - 1)], "client \(client)")
            }
            print("\(kind): \(conflicts.withLock { $0 }) conflicts met and retried")
        }
    }
}
