import AppShellConcurrency

/// Which primary serves each slot of a Redis Cluster, as one node told it (`CLUSTER SLOTS`):
/// immutable, replaced whole when `RedisCluster` learns of a change, so that a request reads it
/// without a lock (but the one that hands over its reference).
final class RedisSlotMap: Sendable {
    /// The primaries, as `owners` numbers them.
    let primaries: [RedisClusterNode]
    /// `host:port` of every node the map names (primaries and replicas): where to ask for the
    /// next map.
    let addresses: [(host: String, port: Int)]
    /// For each slot, its primary's index in `primaries`, or `unowned`.
    private let owners: [UInt16]
    /// A slot no primary serves.
    private static let unowned = UInt16.max

    /// A map that knows no node (before the first is fetched).
    static let empty = RedisSlotMap(
        primaries: [], addresses: [], owners: [UInt16](repeating: unowned, count: RedisSlot.count))

    /// When the map was fetched (`TimerQueue.monotonicClock`, milliseconds).
    let fetched: Int64

    private init(primaries: [RedisClusterNode], addresses: [(host: String, port: Int)], owners: [UInt16]) {
        self.primaries = primaries
        self.addresses = addresses
        self.owners = owners
        fetched = TimerQueue.monotonicClock()
    }

    /// The primary serving `slot`, or `nil` when none does (the cluster is down for it).
    @inline(__always)
    func primary(ofSlot slot: Int) -> RedisClusterNode? {
        let owner = owners[slot]
        return owner == RedisSlotMap.unowned ? nil : primaries[Int(owner)]
    }

    /// The map of a `CLUSTER SLOTS` reply from the node at `askedHost` (the host a node names
    /// itself with when it does not know its address, an empty one); `node` gives the pool's node
    /// at an address. `nil` when the reply is not a map.
    static func parse(
        _ reply: RedisReply, askedHost: String, node: (String, Int) -> RedisClusterNode
    ) -> RedisSlotMap? {
        guard case .array(let ranges) = reply else { return nil }
        var primaries: [RedisClusterNode] = []
        var indices: [String: UInt16] = [:]
        var addresses: [(host: String, port: Int)] = []
        var owners = [UInt16](repeating: unowned, count: RedisSlot.count)
        func address(_ entry: RedisReply) -> (host: String, port: Int)? {
            guard case .array(let fields) = entry, fields.count >= 2, let host = fields[0].text,
                let port = fields[1].integer, port > 0
            else { return nil }
            return (host.isEmpty || host == "?" ? askedHost : host, Int(port))
        }
        for range in ranges {
            guard case .array(let fields) = range, fields.count >= 3, let first = fields[0].integer,
                let last = fields[1].integer, 0 <= first, first <= last, last < RedisSlot.count,
                let primary = address(fields[2])
            else { return nil }
            let name = RedisClusterNode.name(host: primary.host, port: primary.port)
            let index: UInt16
            if let known = indices[name] {
                index = known
            } else {
                index = UInt16(primaries.count)
                indices[name] = index
                primaries.append(node(primary.host, primary.port))
                addresses.append(primary)
            }
            for slot in Int(first)...Int(last) { owners[slot] = index }
            for replica in fields.dropFirst(3) {
                if let replica = address(replica) { addresses.append(replica) }
            }
        }
        guard !primaries.isEmpty else { return nil }
        return RedisSlotMap(primaries: primaries, addresses: addresses, owners: owners)
    }
}
