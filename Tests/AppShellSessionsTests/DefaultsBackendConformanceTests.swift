import AppShellConcurrency
import AppShellSessions
import DefaultsBackendTestSupport
import Foundation
import Testing

/// The backends the conformance suite runs against; each test gets a fresh, empty one.
enum BackendKind: CaseIterable, Sendable, CustomStringConvertible {
    case memory
    case sqlite
    case redis
    case redisCluster

    var description: String {
        switch self {
        case .memory: "memory"
        case .sqlite: "sqlite"
        case .redis: "redis"
        case .redisCluster: "redis-cluster"
        }
    }

    /// Runs `body` with a new backend of this kind; an SQLite file lives in its own directory,
    /// removed afterwards; a Redis backend has a key prefix of its own on the test process's
    /// `redis-server` (`RedisTestServer`), a cluster one on the test process's cluster
    /// (`RedisClusterTests.shared`, three primaries and their replicas).
    func withBackend(_ body: (any DefaultsBackend) throws -> Void) throws {
        switch self {
        case .memory:
            try body(MemoryDefaultsBackend())
        case .sqlite:
            try BackendTestDirectory.with { directory throws in
                try body(SQLiteDefaultsBackend(path: directory.path + "/sessions.sqlite"))
            }
        case .redis:
            let backend = try RedisTestServer.shared().backend()
            defer { backend.close() }
            try body(backend)
        case .redisCluster:
            let backend = try RedisClusterTests.shared.get().backend()
            defer { backend.close() }
            try body(backend)
        }
    }
}

/// A unique directory under the system's temporary directory, removed with everything in it.
struct BackendTestDirectory {
    let path: String

    static func with(_ body: (BackendTestDirectory) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.path + "/appshell-backend-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(BackendTestDirectory(path: path))
    }
}

/// A value shared by threads.
final class ConformanceBox<Value: Sendable>: Sendable {
    let mutex: Locked<Value>
    init(_ value: Value) { mutex = Locked(value) }
}

/// The semantics documented on `DefaultsBackend`, run against every backend.
@Suite struct DefaultsBackendConformanceTests {
    /// One value of each kind, and the edge cases of each that a serialisation could lose.
    static let samples: [DefaultsValue] = [
        .bool(true),
        .bool(false),
        .integer(0),
        .integer(1),
        .integer(-42),
        .integer(Int.max),
        .integer(Int.min),
        .double(1.0),
        .double(-0.5),
        .double(3.141592653589793),
        .double(1e300),
        .double(-2.5e-300),
        .string(""),
        .string("plain"),
        .string("日本語の文字列 🍣 é \"quoted\" \\ back\nline\ttab"),
        .string("nul \u{0} inside"),
        .data([]),
        .data(Array(0...255)),
        .array([]),
        .array([.integer(1), .string("two"), .double(3.0), .bool(false), .data([9, 8])]),
        .array([.array([.array([.integer(-1)])]), .dictionary(["k": .array([])])]),
        .dictionary([:]),
        .dictionary([
            "nested": .dictionary(["deeper": .array([.dictionary(["leaf": .string("ü")])])]),
            "🔑": .data([0, 255]),
            "": .integer(7),
        ]),
    ]

    static func record(
        _ values: [String: DefaultsValue] = ["k": .integer(1)], created: Int64 = 1_000, accessed: Int64 = 2_000
    ) -> SessionRecord {
        SessionRecord(values: values, created: created, accessed: accessed)
    }

    @Test(arguments: BackendKind.allCases)
    func loadOfAnUnknownIDIsNil(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            #expect(try backend.load(SessionID.random()) == nil)
            #expect(try backend.count() == 0)
        }
    }

    @Test(arguments: BackendKind.allCases, samples)
    func everyKindOfValueComesBackAsItself(kind: BackendKind, value: DefaultsValue) throws {
        try kind.withBackend { backend throws in
            let id = SessionID.random()
            let saved = Self.record(["value": value], created: -5, accessed: Int64.max)
            try backend.save(id, saved)
            #expect(try backend.load(id) == saved)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func allKindsTogetherRoundTrip(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            var values: [String: DefaultsValue] = [:]
            for (index, value) in Self.samples.enumerated() { values["key \(index)"] = value }
            values["all"] = .array(Self.samples)
            let id = SessionID.random()
            try backend.save(id, Self.record(values, created: 1_700_000_000, accessed: 1_700_000_123))
            let loaded = try #require(try backend.load(id))
            #expect(loaded.values == values)
            #expect(loaded.created == 1_700_000_000)
            #expect(loaded.accessed == 1_700_000_123)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aWholeDoubleStaysADouble(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let id = SessionID.random()
            try backend.save(id, Self.record(["double": .double(1.0), "integer": .integer(1), "bool": .bool(true)]))
            let values = try #require(try backend.load(id)).values
            guard case .double(let number) = values["double"] else {
                Issue.record("1.0 came back as \(String(describing: values["double"]))")
                return
            }
            #expect(number == 1.0)
            #expect(values["integer"] == .integer(1))
            #expect(values["bool"] == .bool(true))
        }
    }

    @Test(arguments: BackendKind.allCases)
    func saveReplacesTheWholeRecord(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let id = SessionID.random()
            try backend.save(id, Self.record(["old": .string("gone"), "kept": .integer(1)], created: 10, accessed: 20))
            let replacement = Self.record(["kept": .integer(2)], created: 30, accessed: 40)
            try backend.save(id, replacement)
            #expect(try backend.load(id) == replacement)
            #expect(try backend.count() == 1)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func touchChangesOnlyAccessed(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let id = SessionID.random()
            let saved = Self.record(["a": .string("b")], created: 100, accessed: 200)
            try backend.save(id, saved)
            try backend.touch(id, accessed: 999)
            #expect(try backend.load(id) == Self.record(["a": .string("b")], created: 100, accessed: 999))
        }
    }

    @Test(arguments: BackendKind.allCases)
    func touchOfAnUnknownIDDoesNothing(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let id = SessionID.random()
            let saved = Self.record()
            try backend.save(id, saved)
            let unknown = SessionID.random()
            try backend.touch(unknown, accessed: 5)
            #expect(try backend.load(unknown) == nil)
            #expect(try backend.load(id) == saved)
            #expect(try backend.count() == 1)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func renameMovesTheRecord(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let old = SessionID.random()
            let new = SessionID.random()
            let other = SessionID.random()
            let saved = Self.record(["user": .string("ann")], created: 7, accessed: 8)
            try backend.save(old, saved)
            try backend.save(other, Self.record())
            try backend.rename(old, to: new)
            #expect(try backend.load(old) == nil)
            #expect(try backend.load(new) == saved)
            #expect(try backend.load(other) == Self.record())
            #expect(try backend.count() == 2)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func renameReplacingMovesAndRewritesTheRecord(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let old = SessionID.random()
            let new = SessionID.random()
            try backend.save(old, Self.record(["isLogin": .bool(false)], created: 7, accessed: 8))
            let rewritten = Self.record(["isLogin": .bool(true)], created: 7, accessed: 9)
            try backend.rename(old, to: new, replacingWith: rewritten)
            #expect(try backend.load(old) == nil)
            #expect(try backend.load(new) == rewritten)
            #expect(try backend.count() == 1)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func renamingAnUnknownIDDoesNothing(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let existing = SessionID.random()
            let saved = Self.record(["x": .integer(1)])
            try backend.save(existing, saved)
            let unknown = SessionID.random()
            // Even onto an existing id: there is nothing to move, so the target stays as it was.
            try backend.rename(unknown, to: existing)
            try backend.rename(unknown, to: SessionID.random())
            #expect(try backend.load(existing) == saved)
            #expect(try backend.load(unknown) == nil)
            #expect(try backend.count() == 1)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func renameOntoAnExistingIDReplacesIt(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let old = SessionID.random()
            let new = SessionID.random()
            let moving = Self.record(["from": .string("old")], created: 1, accessed: 2)
            try backend.save(old, moving)
            try backend.save(new, Self.record(["from": .string("new")], created: 3, accessed: 4))
            try backend.rename(old, to: new)
            #expect(try backend.load(old) == nil)
            #expect(try backend.load(new) == moving)
            #expect(try backend.count() == 1)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func removeDeletesOnlyThatRecord(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let removed = SessionID.random()
            let kept = SessionID.random()
            try backend.save(removed, Self.record())
            try backend.save(kept, Self.record(["kept": .bool(true)]))
            try backend.remove(removed)
            #expect(try backend.load(removed) == nil)
            #expect(try backend.load(kept) == Self.record(["kept": .bool(true)]))
            try backend.remove(SessionID.random())
            try backend.remove(removed)
            #expect(try backend.count() == 1)
        }
    }

    /// A batch's deletes (an expired session's, the sweeper's, through the store writer) hold with
    /// the batch's other writes; deleting a record that is gone already is no error.
    @Test(arguments: BackendKind.allCases)
    func aBatchDeletesAmongItsOtherWrites(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let expired = SessionID.random()
            let idle = SessionID.random()
            let kept = SessionID.random()
            try backend.save(expired, Self.record(created: 1, accessed: 1))
            try backend.save(idle, Self.record(created: 1, accessed: 2))
            try backend.applyAll([
                .save(kept, Self.record(created: 5, accessed: 6)), .remove(expired), .touch(kept, accessed: 7),
                .remove(SessionID.random()), .removeExpired(accessedBefore: 3, createdBefore: 0),
            ])
            #expect(try backend.load(expired) == nil)
            #expect(try backend.load(idle) == nil)
            #expect(try backend.load(kept)?.accessed == 7)
            #expect(try backend.count() == 1)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func removeExpiredDeletesByAccessedOrCreated(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            // (created, accessed) against accessedBefore 150 and createdBefore 50; the bounds are exclusive.
            let cases: [(created: Int64, accessed: Int64, expired: Bool)] = [
                (100, 149, true),  // idle too long
                (100, 150, false),  // exactly on the idle bound
                (49, 500, true),  // too old
                (50, 500, false),  // exactly on the age bound
                (10, 10, true),  // both, counted once
                (-1, -1, true),
            ]
            var ids: [(SessionID, Bool)] = []
            for entry in cases {
                let id = SessionID.random()
                try backend.save(id, Self.record(created: entry.created, accessed: entry.accessed))
                ids.append((id, entry.expired))
            }
            #expect(try backend.removeExpired(accessedBefore: 150, createdBefore: 50) == 4)
            for (id, expired) in ids {
                #expect(try (backend.load(id) == nil) == expired)
            }
            #expect(try backend.count() == 2)
            #expect(try backend.removeExpired(accessedBefore: 150, createdBefore: 50) == 0)
            #expect(try backend.removeExpired(accessedBefore: 151, createdBefore: 0) == 1)
            #expect(try backend.count() == 1)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func countFollowsInsertsReplacesAndRemoves(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let ids = (0..<3).map { _ in SessionID.random() }
            for id in ids { try backend.save(id, Self.record()) }
            #expect(try backend.count() == 3)
            try backend.save(ids[0], Self.record(["again": .integer(2)]))
            #expect(try backend.count() == 3)
            try backend.remove(ids[1])
            #expect(try backend.count() == 2)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func sixteenThreadsLoseNothing(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let threads = 16
            let perThread = 25
            let failures = ConformanceBox<[String]>([])
            let saved = ConformanceBox<[(SessionID, SessionRecord)]>([])
            let group = DispatchGroup()
            for thread in 0..<threads {
                group.enter()
                // Real threads, not the cooperative pool: they must all be inside the backend at once.
                Thread {
                    defer { group.leave() }
                    do {
                        for index in 0..<perThread {
                            let id = SessionID.random()
                            let record = Self.record(
                                ["thread": .integer(thread), "index": .integer(index)], created: Int64(index),
                                accessed: Int64(thread))
                            try backend.save(id, record)
                            let loaded = try backend.load(id)
                            if loaded != record {
                                failures.mutex.withLock {
                                    $0.append("thread \(thread) #\(index): \(String(describing: loaded))")
                                }
                            }
                            try backend.touch(id, accessed: Int64(thread + 100))
                            saved.mutex.withLock { $0.append((id, record)) }
                        }
                    } catch {
                        failures.mutex.withLock { $0.append("thread \(thread): \(error)") }
                    }
                }.start()
            }
            group.wait()
            #expect(failures.mutex.withLock { $0 } == [])
            #expect(try backend.count() == threads * perThread)
            for (id, record) in saved.mutex.withLock({ $0 }) {
                var touched = record
                touched.accessed += 100
                #expect(try backend.load(id) == touched)
            }
        }
    }
}
