import Testing

@testable import AppShellSessions

/// The registry picks a shard by one word of the id and each shard's table hashes another: the ids
/// of one shard must still spread over the table's buckets.
@Suite struct SessionIDHashTests {
    @Test func idsOfOneShardSpreadOverTheBuckets() {
        let ids = (0..<20_000).map { _ in SessionID.random() }
        let shardZero = ids.filter { $0.shardKey % 64 == 0 }
        #expect(shardZero.count > 200)
        // The bucket of a table of 1 024 is the hash's low 10 bits.
        let buckets = Set(shardZero.map { $0.hashValue & 1023 })
        #expect(buckets.count > shardZero.count / 2, "\(shardZero.count) ids in \(buckets.count) buckets")
    }

    @Test func theHashIsTheSameForEqualIDsAndDiffersForOthers() throws {
        let id = SessionID.random()
        let copy = try #require(SessionID(id.text))
        #expect(copy.hashValue == id.hashValue)
        #expect(SessionID.random().hashValue != id.hashValue)
        var set = Set<SessionID>()
        set.insert(id)
        #expect(set.contains(copy))
    }
}
