import Glibc

/// A session's lease in the Redis store (`LeaseTerms` says what one is): the fields `lh` (the
/// holder), `le` (when it ends, the server's Unix milliseconds), `lr` (the instance that asked
/// last) and `lc` (when another instance last waited for it) of the record's hash, and the same
/// of the user's store's hash. Granted by `RedisScript.lease`; every script that writes a record
/// or a user's store refuses while another instance holds it (a conflict: the writer's request
/// runs again once the loader waited it out).
enum RedisLease {
    /// What the relay channels of the holders begin with: another instance asks the holder to
    /// give a lease up there (`RedisScript.lease`, which publishes it itself).
    static let channelPrefix = "lease."

    /// A new holder's name: 16 random hexadecimal digits.
    static func newHolder() -> [UInt8] {
        let id = SessionID.random()
        return Array(sha1Hex(Array(id.text.utf8)).utf8.prefix(16))
    }

    /// Blocks for `milliseconds` (what was left of another instance's lease on records just
    /// removed: until then it may still answer from memory with them).
    static func waitOut(milliseconds: Int64) {
        guard milliseconds > 0 else { return }
        var left = timespec(tv_sec: Int(milliseconds / 1_000), tv_nsec: Int(milliseconds % 1_000) * 1_000_000)
        var asked = left
        while nanosleep(&asked, &left) != 0 && errno == EINTR { asked = left }
    }
}

extension RedisDefaultsBackend {
    /// `lease.<holder>`, when this store grants leases.
    package var leaseChannel: String? {
        leaseTerms == nil ? nil : RedisLease.channelPrefix + String(decoding: leaseHolder, as: UTF8.self)
    }

    /// `release`, then a record's key (`key(_:)`) or a user's store's (`userStoreKey(_:)`), on
    /// lines of their own (`RedisScript.lease` sends it).
    package func leaseTarget(requestedBy message: [UInt8]) -> LeaseTarget? {
        let lines = message.split(separator: 10, omittingEmptySubsequences: false)
        guard lines.count >= 2, lines[0].elementsEqual("release".utf8) else { return nil }
        let key = Array(lines[1])
        if let storeKey = storeKey(ofKey: key) { return .session(storeKey) }
        let name = String(decoding: key, as: UTF8.self)
        let head = keyPrefix + "user:{"
        guard name.hasPrefix(head), name.hasSuffix("}"), name.count > head.count + 1 else { return nil }
        return .userStore(String(name.dropFirst(head.count).dropLast()))
    }

    /// `RedisScript.releaseLease` of each target's key, pipelined.
    package func releaseLeases(of targets: [LeaseTarget]) throws(StoreError) {
        let commands = targets.map { target in
            let key: [UInt8] =
                switch target {
                case .session(let storeKey): bytes(storeKey.text(prefix: keyPrefix + "{", suffix: "}"))
                case .userStore(let user): userStoreKey(user)
                }
            return RedisScript.releaseLease.call([key], [leaseHolder])
        }
        for reply in try reader.pipeline(commands) {
            if case .error = reply { throw unexpected(reply, "giving a lease up") }
        }
    }

    /// One server grants leases on the standard terms; a cluster none (its writes that span slots
    /// are made in steps, which do not yet respect them).
    package var leaseTerms: LeaseTerms? { writer.isCluster ? nil : .standard }

    /// Each request's `RedisScript.lease`, pipelined in one round trip.
    package func checkLeases(_ requests: [LeaseRequest]) throws(StoreError) -> [LeaseAnswer] {
        guard let terms = leaseTerms else { return [] }
        let commands = requests.map { request in
            RedisScript.lease.call(
                [key(request.id)] + (request.user.map { [userStoreKey($0)] } ?? []),
                [
                    leaseHolder, number(Int64(terms.length)), bytes(request.asks ? "1" : "0"),
                    number(Int64(terms.quietMilliseconds)),
                    bytes(RedisMessageRelay.channelPrefix(keyPrefix: keyPrefix) + RedisLease.channelPrefix),
                ])
        }
        return try reader.pipeline(commands).map { reply throws(StoreError) in
            guard case .array(let fields) = reply, fields.count == 4, let storeVersion = fields[1].integer,
                let granted = fields[2].integer, let left = fields[3].integer
            else { throw unexpected(reply, "a lease") }
            return LeaseAnswer(
                version: fields[0] == .null ? nil : fields[0].integer ?? -1, userStoreVersion: storeVersion,
                granted: granted == 1, othersMilliseconds: Int(left))
        }
    }
}
