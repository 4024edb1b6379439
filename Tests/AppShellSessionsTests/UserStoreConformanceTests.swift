import AppShellSessions
import DefaultsBackendTestSupport
import Foundation
import Testing

/// Accounts, the sessions of a user and the user's store, as `DefaultsBackend` documents them,
/// run against every backend.
@Suite struct UserStoreConformanceTests {
    static func record(
        _ user: String?, _ values: [String: DefaultsValue] = ["k": .integer(1)], accessed: Int64 = 2_000
    ) -> SessionRecord {
        var record = SessionRecord(values: values, created: 1_000, accessed: accessed)
        record.user = user
        return record
    }

    static func account(_ name: String, hash: String = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA") -> Account {
        Account(name: name, passwordHash: hash, created: 1_700_000_000)
    }

    /// Whether `body` threw a conflict (and nothing else).
    static func isConflict(_ body: () throws(StoreError) -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            return error.isConflict
        }
    }

    @Test(arguments: BackendKind.allCases)
    func anAccountIsInsertedOnceAndFoundByName(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            #expect(try backend.account(named: "ann") == nil)
            #expect(try backend.insertAccount(Self.account("ann")))
            #expect(try backend.account(named: "ann") == Self.account("ann"))
            // Taken: refused, and the first account stays as it was.
            #expect(try !backend.insertAccount(Self.account("ann", hash: "other")))
            #expect(try backend.account(named: "ann") == Self.account("ann"))
            #expect(try backend.account(named: "an") == nil)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aPasswordHashIsSetOnItsAccountOnly(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            #expect(try backend.insertAccount(Self.account("ann")))
            #expect(try backend.insertAccount(Self.account("bob")))
            #expect(try backend.setPasswordHash("new", ofAccount: "ann"))
            #expect(try backend.account(named: "ann")?.passwordHash == "new")
            #expect(try backend.account(named: "ann")?.created == 1_700_000_000)
            #expect(try backend.account(named: "bob") == Self.account("bob"))
            #expect(try !backend.setPasswordHash("new", ofAccount: "carol"))
            #expect(try backend.account(named: "carol") == nil)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func accountNamesAreListedSorted(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            #expect(try backend.accountNames() == [])
            for name in ["zoe", "ann", "bob.smith", "0day", "a-b", "a_b"] {
                #expect(try backend.insertAccount(Self.account(name)))
            }
            #expect(try backend.accountNames() == ["0day", "a-b", "a_b", "ann", "bob.smith", "zoe"])
        }
    }

    /// A record's user is stored, follows its record through renames, and the user's sessions are
    /// found under their current ids.
    @Test(arguments: BackendKind.allCases)
    func aSessionKnowsItsUserThroughRenames(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let first = SessionID.random()
            let second = SessionID.random()
            let guest = SessionID.random()
            try backend.save(first, Self.record("ann"))
            try backend.save(second, Self.record("ann"))
            try backend.save(guest, Self.record(nil))
            #expect(try backend.load(first)?.user == "ann")
            #expect(try backend.load(guest)?.user == nil)
            let renamed = SessionID.random()
            try backend.rename(first, to: renamed)
            #expect(try backend.load(renamed)?.user == "ann")
            let replaced = SessionID.random()
            try backend.rename(second, to: replaced, replacingWith: Self.record("ann", ["k": .integer(2)]))
            #expect(try backend.load(replaced) == Self.record("ann", ["k": .integer(2)]))
            // The guest logs in through a rotation onto an id that held another of ann's sessions.
            try backend.rename(guest, to: renamed, replacingWith: Self.record("bob"))
            #expect(try backend.removeSessions(of: "ann", except: nil) == [replaced.storeKey])
            #expect(try backend.load(replaced) == nil)
            #expect(try backend.load(renamed) == Self.record("bob"))
            #expect(try backend.removeSessions(of: "bob", except: nil) == [renamed.storeKey])
            #expect(try backend.count() == 0)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func removingAUsersSessionsKeepsTheOneAskedForAndOtherUsers(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let anns = (0..<3).map { _ in SessionID.random() }
            let bobs = SessionID.random()
            let guest = SessionID.random()
            for id in anns { try backend.save(id, Self.record("ann")) }
            try backend.save(bobs, Self.record("bob"))
            try backend.save(guest, Self.record(nil))
            let removed = try backend.removeSessions(of: "ann", except: anns[1])
            #expect(removed == [anns[0].storeKey, anns[2].storeKey])
            #expect(try backend.load(anns[0]) == nil)
            #expect(try backend.load(anns[1]) == Self.record("ann"))
            #expect(try backend.load(bobs) == Self.record("bob"))
            #expect(try backend.load(guest) == Self.record(nil))
            #expect(try backend.removeSessions(of: "ann", except: anns[1]) == [])
            #expect(try backend.removeSessions(of: "nobody", except: nil) == [])
            #expect(try backend.removeSessions(of: "ann", except: nil) == [anns[1].storeKey])
            #expect(try backend.count() == 2)
        }
    }

    /// A session that was logged out, logged in as another user, removed or expired is not one of
    /// the user's any more.
    @Test(arguments: BackendKind.allCases)
    func aSessionNoLongerTheUsersIsNotRemovedAsTheirs(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let loggedOut = SessionID.random()
            let switched = SessionID.random()
            let removed = SessionID.random()
            let expired = SessionID.random()
            let kept = SessionID.random()
            for id in [loggedOut, switched, removed, expired, kept] { try backend.save(id, Self.record("ann")) }
            try backend.save(expired, Self.record("ann", accessed: 10))
            try backend.save(loggedOut, Self.record(nil))
            try backend.applyAll([.save(switched, Self.record("bob"))])
            try backend.remove(removed)
            #expect(try backend.removeExpired(accessedBefore: 100, createdBefore: 0) == 1)
            #expect(try backend.removeSessions(of: "ann", except: nil) == [kept.storeKey])
            #expect(try backend.load(loggedOut) == Self.record(nil))
            #expect(try backend.load(switched) == Self.record("bob"))
            #expect(try backend.count() == 2)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func removingAnAccountTakesItsStoreAndSessionsAndNoOneElses(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            for name in ["ann", "bob"] { #expect(try backend.insertAccount(Self.account(name))) }
            let anns = [SessionID.random(), SessionID.random()]
            let bobs = SessionID.random()
            let guest = SessionID.random()
            for id in anns { try backend.save(id, Self.record("ann")) }
            try backend.save(bobs, Self.record("bob"))
            try backend.save(guest, Self.record(nil))
            _ = try backend.writeUserStore(UserWrite(user: "ann", values: ["a": .integer(1)], expectedVersion: 0))
            _ = try backend.writeUserStore(UserWrite(user: "bob", values: ["b": .integer(2)], expectedVersion: 0))
            let removed = try #require(try backend.removeAccount(named: "ann"))
            #expect(removed.account == Self.account("ann"))
            #expect(removed.userStore == UserRecord(values: ["a": .integer(1)], version: 1))
            #expect(removed.sessions == Set(anns.map(\.storeKey)))
            #expect(try backend.account(named: "ann") == nil)
            #expect(try backend.accountNames() == ["bob"])
            #expect(try backend.userStore(of: "ann") == UserRecord())
            for id in anns { #expect(try backend.load(id) == nil) }
            #expect(try backend.load(bobs) == Self.record("bob"))
            #expect(try backend.load(guest) == Self.record(nil))
            #expect(try backend.userStore(of: "bob") == UserRecord(values: ["b": .integer(2)], version: 1))
            #expect(try backend.account(named: "bob") == Self.account("bob"))
            #expect(try backend.removeAccount(named: "ann") == nil)
            // The name is free again, with an empty store.
            #expect(try backend.insertAccount(Self.account("ann")))
            #expect(try backend.userStore(of: "ann").version == 0)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aUserStoreStartsEmptyAndCountsItsWrites(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            #expect(try backend.userStore(of: "ann") == UserRecord(values: [:], version: 0))
            var values: [String: DefaultsValue] = [:]
            for (index, value) in DefaultsBackendConformanceTests.samples.enumerated() {
                values["key \(index)"] = value
            }
            #expect(try backend.writeUserStore(UserWrite(user: "ann", values: values, expectedVersion: 0)) == 1)
            #expect(try backend.userStore(of: "ann") == UserRecord(values: values, version: 1))
            #expect(
                try backend.writeUserStore(UserWrite(user: "ann", values: ["x": .bool(true)], expectedVersion: 1)) == 2)
            #expect(try backend.userStore(of: "ann") == UserRecord(values: ["x": .bool(true)], version: 2))
            // Made over a version that is not the stored one: refused, nothing written.
            for stale: Int64 in [0, 1, 3] {
                #expect(
                    Self.isConflict { () throws(StoreError) in
                        _ = try backend.writeUserStore(UserWrite(user: "ann", values: [:], expectedVersion: stale))
                    })
            }
            #expect(try backend.userStore(of: "ann") == UserRecord(values: ["x": .bool(true)], version: 2))
            #expect(try backend.userStore(of: "bob") == UserRecord())
        }
    }

    /// A session's write carrying a user write makes both; when the user's store changed
    /// meanwhile, neither.
    @Test(arguments: BackendKind.allCases)
    func aSessionWriteAndItsUserWriteHoldTogetherOrNotAtAll(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let id = SessionID.random()
            var first = Self.record("ann", ["step": .integer(1)])
            first.userWrite = UserWrite(user: "ann", values: ["theme": .string("dark")], expectedVersion: 0)
            try backend.save(id, first)
            #expect(try backend.load(id) == first)
            #expect(try backend.load(id)?.userWrite == nil)
            #expect(try backend.userStore(of: "ann") == UserRecord(values: ["theme": .string("dark")], version: 1))

            var stale = Self.record("ann", ["step": .integer(2)])
            stale.userWrite = UserWrite(user: "ann", values: ["theme": .string("light")], expectedVersion: 0)
            #expect(Self.isConflict { () throws(StoreError) in try backend.save(id, stale) })
            let newID = SessionID.random()
            #expect(
                Self.isConflict { () throws(StoreError) in try backend.rename(id, to: newID, replacingWith: stale) })
            #expect(try backend.load(id) == first)
            #expect(try backend.load(newID) == nil)
            #expect(try backend.userStore(of: "ann") == UserRecord(values: ["theme": .string("dark")], version: 1))

            var current = stale
            current.userWrite?.expectedVersion = 1
            try backend.rename(id, to: newID, replacingWith: current)
            #expect(try backend.load(id) == nil)
            #expect(try backend.load(newID) == current)
            #expect(try backend.userStore(of: "ann") == UserRecord(values: ["theme": .string("light")], version: 2))
            #expect(try backend.removeSessions(of: "ann", except: nil) == [newID.storeKey])
        }
    }

    /// In a batch, a write whose user's store changed meanwhile is refused alone and reported by
    /// position; the batch's other writes hold.
    @Test(arguments: BackendKind.allCases)
    func aBatchReportsUserConflictsAndKeepsTheOtherWrites(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let (first, second, plain, touched) = (
                SessionID.random(), SessionID.random(), SessionID.random(), SessionID.random()
            )
            try backend.save(touched, Self.record(nil))
            var firstRecord = Self.record("ann", ["from": .string("first")])
            firstRecord.userWrite = UserWrite(user: "ann", values: ["by": .string("first")], expectedVersion: 0)
            var secondRecord = Self.record("ann", ["from": .string("second")])
            secondRecord.userWrite = UserWrite(user: "ann", values: ["by": .string("second")], expectedVersion: 0)
            var bobs = Self.record("bob")
            bobs.userWrite = UserWrite(user: "bob", values: ["by": .string("bob")], expectedVersion: 0)
            let conflicts = try backend.applyAllReportingConflicts([
                .save(first, firstRecord), .touch(touched, accessed: 5_000), .save(second, secondRecord),
                .save(plain, Self.record(nil)), .save(SessionID.random(), bobs),
            ])
            #expect(conflicts == [2])
            #expect(try backend.load(first) == firstRecord)
            #expect(try backend.load(second) == nil)
            #expect(try backend.load(plain) == Self.record(nil))
            #expect(try backend.load(touched)?.accessed == 5_000)
            #expect(try backend.userStore(of: "ann") == UserRecord(values: ["by": .string("first")], version: 1))
            #expect(try backend.userStore(of: "bob") == UserRecord(values: ["by": .string("bob")], version: 1))
            #expect(try backend.removeSessions(of: "ann", except: nil) == [first.storeKey])
        }
    }

    /// `applyAll` throws the conflict; a backend with transactions makes none of the batch.
    @Test(arguments: BackendKind.allCases)
    func applyAllThrowsAUserConflict(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            _ = try backend.writeUserStore(UserWrite(user: "ann", values: ["v": .integer(1)], expectedVersion: 0))
            let (plain, refused) = (SessionID.random(), SessionID.random())
            var stale = Self.record("ann")
            stale.userWrite = UserWrite(user: "ann", values: ["v": .integer(2)], expectedVersion: 0)
            #expect(
                Self.isConflict { () throws(StoreError) in
                    try backend.applyAll([.save(plain, Self.record(nil)), .save(refused, stale)])
                })
            #expect(try backend.load(refused) == nil)
            #expect(try backend.userStore(of: "ann") == UserRecord(values: ["v": .integer(1)], version: 1))
            if !backend.isShared { #expect(try backend.load(plain) == nil) }
        }
    }

    @Test func theEncodedSizeIsTheEncodingsBytes() {
        let values: [String: DefaultsValue] = ["name": .string("日本語"), "list": .array([.integer(1), .data([1, 2])])]
        #expect(UserRecord.encodedByteCount(of: values) == DefaultsValue.encode(values).count)
        #expect(UserRecord(values: values, version: 3).encodedByteCount == DefaultsValue.encode(values).count)
        #expect(UserRecord.encodedByteCount(of: [:]) == DefaultsValue.encode([:]).count)
    }
}
