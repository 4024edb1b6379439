/// A Lua script the store runs (atomic on the server), called by its SHA-1 (`EVALSHA`): its text
/// crosses the network, and Redis hashes it, once per connection (`RedisConnection` loads its
/// scripts when it connects, and again when the server answers `NOSCRIPT`: it restarted, failed
/// over to a replica, or an operator flushed the scripts), not at every call.
struct RedisScript: Sendable {
    /// The script's text.
    let text: [UInt8]
    /// Its SHA-1 in hexadecimal, which names it on the server.
    let sha: [UInt8]

    init(_ source: String) {
        text = Array(source.utf8)
        sha = Array(sha1Hex(text).utf8)
    }

    /// The command calling the script with `keys` and `arguments`.
    func call(_ keys: [[UInt8]], _ arguments: [[UInt8]]) -> [[UInt8]] {
        [Array("EVALSHA".utf8), sha, Array(String(keys.count).utf8)] + keys + arguments
    }
}

/// The scripts of the store's records, accounts and users' stores.
extension RedisScript {
    /// Every script below: what a connection of the backend loads.
    static let all = [
        write, writeWithUser, writeSnapshot, touch, rename, remove, removeIfExpired, removeSessions, removeAccount,
        insertAccount,
        setPasswordHash, writeUserStore, lease, releaseLease,
    ]

    /// KEYS[1] is checked, every key deleted, and the last one written: ARGV is the expected
    /// version of KEYS[1] (empty: any; a negative one — not known — never matches), the values,
    /// created, accessed, whether there is a snapshot, the snapshot, the expiry deadline (-1:
    /// none) and the writing instance (`RedisLease`). Returns the new version, or -1 when KEYS[1]
    /// is not at the expected one or another instance holds its lease. The writer's own lease
    /// moves to the target.
    static let write = RedisScript(
        leaseFunctions + """
            local version = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
            if ARGV[1] ~= '' and version ~= tonumber(ARGV[1]) then return -1 end
            if leftElsewhere(KEYS[1], ARGV[8]) > 0 then return -1 end
            local lease = redis.call('HMGET', KEYS[1], 'lh', 'le', 'lr', 'lc')
            for _, key in ipairs(KEYS) do redis.call('DEL', key) end
            local target = KEYS[#KEYS]
            redis.call('HSET', target, 'v', ARGV[2], 'c', ARGV[3], 'a', ARGV[4], 'n', version + 1)
            if ARGV[5] == '1' then redis.call('HSET', target, 's', ARGV[6]) end
            if ARGV[7] ~= '-1' then redis.call('EXPIREAT', target, ARGV[7]) end
            keepLease(target, lease, ARGV[8])
            return version + 1
            """)
    /// `write` for a record logged in as a user (field `u`, and a member of the user's set of
    /// sessions) or carrying a write of its user's store; the user-less records keep the shorter
    /// `write`. ARGV 1 to 7 as `write`'s, then the user ('' none), the written store's user (''
    /// none), its expected version, its values, the record's absolute deadline (-1: none: the
    /// user's set of sessions lives at least until then, so the writes that follow need not
    /// touch it), the writing instance, and the key prefix. Returns -1, with nothing written, when
    /// KEYS[1] or the user's store is not at its expected version, or another instance holds the
    /// lease of either (`RedisLease`).
    static let writeWithUser = RedisScript(
        userKeys + leaseFunctions + """
            local version = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
            if ARGV[1] ~= '' and version ~= tonumber(ARGV[1]) then return -1 end
            if leftElsewhere(KEYS[1], ARGV[13]) > 0 then return -1 end
            local store
            if ARGV[9] ~= '' then
              store = storeOf(ARGV[9])
              if tonumber(redis.call('HGET', store, 'n') or '0') ~= tonumber(ARGV[10]) then return -1 end
              if leftElsewhere(store, ARGV[13]) > 0 then return -1 end
            end
            local lease = redis.call('HMGET', KEYS[1], 'lh', 'le', 'lr', 'lc')
            local target = KEYS[#KEYS]
            -- The target stays in the set when it stays logged in as the same user: no walk of the set.
            for _, key in ipairs(KEYS) do forget(key, key == target and ARGV[8] or nil) end
            redis.call('HSET', target, 'v', ARGV[2], 'c', ARGV[3], 'a', ARGV[4], 'n', version + 1)
            if ARGV[5] == '1' then redis.call('HSET', target, 's', ARGV[6]) end
            if ARGV[7] ~= '-1' then redis.call('EXPIREAT', target, ARGV[7]) end
            if ARGV[8] ~= '' then
              redis.call('HSET', target, 'u', ARGV[8])
              enter(sessionsOf(ARGV[8]), target, ARGV[8])
              outlive(sessionsOf(ARGV[8]), ARGV[12])
            end
            if store then redis.call('HSET', store, 'v', ARGV[11], 'n', tonumber(ARGV[10]) + 1) end
            keepLease(target, lease, ARGV[13])
            return version + 1
            """)
    /// The common write of an action: KEYS[1]'s snapshot and access alone, its values, creation
    /// and user as stored (`SessionRecord.valuesAsStored`), once it is at the expected version.
    /// ARGV: the expected version, accessed, whether there is a snapshot, the snapshot, the expiry
    /// deadline (-1: none), the writing instance. Returns the new version, or -1 (nothing
    /// written; also while another instance holds the lease). The hash is changed in place, not
    /// deleted and made again as `write` does (a lease stays); a user's set of sessions already
    /// lives as long as the session can (`writeWithUser`).
    static let writeSnapshot = RedisScript(
        leaseFunctions + """
            local fields = redis.call('HMGET', KEYS[1], 'n', 'lh')
            local version = tonumber(fields[1] or '0')
            if version ~= tonumber(ARGV[1]) then return -1 end
            if fields[2] and fields[2] ~= ARGV[6] and leftElsewhere(KEYS[1], ARGV[6]) > 0 then return -1 end
            if ARGV[3] == '1' then
              redis.call('HSET', KEYS[1], 's', ARGV[4], 'a', ARGV[2], 'n', version + 1)
            else
              redis.call('HDEL', KEYS[1], 's')
              redis.call('HSET', KEYS[1], 'a', ARGV[2], 'n', version + 1)
            end
            if ARGV[5] ~= '-1' then redis.call('EXPIREAT', KEYS[1], ARGV[5]) end
            return version + 1
            """)
    /// KEYS[1]: the record; ARGV: accessed, idle seconds, absolute seconds (-1: no expiry). A
    /// logged-in session's user's set of sessions lives as long as the session can already.
    static let touch = RedisScript(
        """
        local created = redis.call('HGET', KEYS[1], 'c')
        if not created then return 0 end
        redis.call('HSET', KEYS[1], 'a', ARGV[1])
        local idle = tonumber(ARGV[2])
        if idle >= 0 then
          local deadline = math.min(tonumber(ARGV[1]) + idle, tonumber(created) + tonumber(ARGV[3]))
          redis.call('EXPIREAT', KEYS[1], deadline)
        end
        return 1
        """)
    /// KEYS[1] moved to KEYS[2] (replacing it), when KEYS[1] exists; ARGV: the writing instance,
    /// the key prefix. The users' sets of sessions follow, and the lease (-1, nothing moved,
    /// while another instance holds it).
    static let rename = RedisScript(
        userKeys + leaseFunctions + """
            if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
            if leftElsewhere(KEYS[1], ARGV[1]) > 0 then return -1 end
            local user = redis.call('HGET', KEYS[1], 'u')
            forget(KEYS[2])
            redis.call('RENAME', KEYS[1], KEYS[2])
            if user then
              redis.call('SREM', sessionsOf(user), KEYS[1])
              enter(sessionsOf(user), KEYS[2], user)
            end
            return 1
            """)
    /// KEYS[1] deleted (and taken out of its user's set); ARGV: the writing instance, the key
    /// prefix. -1, nothing deleted, while another instance holds its lease.
    static let remove = RedisScript(
        userKeys + leaseFunctions + """
            if leftElsewhere(KEYS[1], ARGV[1]) > 0 then return -1 end
            forget(KEYS[1])
            return 1
            """)
    /// KEYS[1] deleted when its access is before ARGV[1] or its creation before ARGV[2], and no
    /// instance holds its lease (the holder serves it: its access is not written at every read);
    /// ARGV[3] is the key prefix.
    static let removeIfExpired = RedisScript(
        userKeys + leaseFunctions + """
            local times = redis.call('HMGET', KEYS[1], 'c', 'a')
            if not times[1] then return 0 end
            if leftElsewhere(KEYS[1], '') > 0 then return 0 end
            if tonumber(times[2]) < tonumber(ARGV[1]) or tonumber(times[1]) < tonumber(ARGV[2]) then
              forget(KEYS[1])
              return 1
            end
            return 0
            """)
    /// KEYS[1]: a user's set of sessions; ARGV: the user, a session's key to keep ('' none), the
    /// writing instance, the key prefix. Deletes every record of the set logged in as the user but
    /// the kept one (a member whose record is gone or logged in as another is only taken out);
    /// returns their keys, and the milliseconds left of the longest lease another instance held on
    /// one of them (it may serve the session from memory until then).
    static let removeSessions = RedisScript(
        userKeys + leaseFunctions + removeSessionsBody + """
            local removed, left = removeSessions(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
            return {removed, left}
            """)
    /// KEYS: the account, the set of accounts' names, the user's store and set of sessions; ARGV:
    /// the name, the writing instance, the key prefix. Deletes them all and the user's sessions;
    /// returns nil when there is no such account, else the password hash, the created time, the
    /// store's values and version ('' and 0 when none), the removed sessions' keys and the
    /// milliseconds left of the longest lease another instance held on them or the store.
    static let removeAccount = RedisScript(
        userKeys + leaseFunctions + removeSessionsBody + """
            local account = redis.call('HMGET', KEYS[1], 'h', 'c')
            if not account[1] then return false end
            local store = redis.call('HMGET', KEYS[3], 'v', 'n')
            local removed, left = removeSessions(KEYS[4], ARGV[1], '', ARGV[2])
            left = math.max(left, leftElsewhere(KEYS[3], ARGV[2]))
            redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
            redis.call('SREM', KEYS[2], ARGV[1])
            return {account[1], account[2], store[1] or '', store[2] or '0', removed, left}
            """)
    /// KEYS: the account, the set of accounts' names; ARGV: the name, the hash, the created time.
    /// Returns 0, with nothing changed, when the account exists.
    static let insertAccount = RedisScript(
        """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        redis.call('HSET', KEYS[1], 'h', ARGV[2], 'c', ARGV[3])
        redis.call('SADD', KEYS[2], ARGV[1])
        return 1
        """)
    /// KEYS[1]: the account; ARGV[1]: the hash. Returns 0 when there is no such account.
    static let setPasswordHash = RedisScript(
        """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        redis.call('HSET', KEYS[1], 'h', ARGV[1])
        return 1
        """)
    /// KEYS[1]: a user's store; ARGV: the expected version, the values, the writing instance.
    /// Returns the new version, or -1, with nothing written, when the store is not at the expected
    /// one or another instance holds its lease.
    static let writeUserStore = RedisScript(
        leaseFunctions + """
            local version = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
            if version ~= tonumber(ARGV[1]) then return -1 end
            if leftElsewhere(KEYS[1], ARGV[3]) > 0 then return -1 end
            redis.call('HSET', KEYS[1], 'v', ARGV[2], 'n', version + 1)
            return version + 1
            """)

    private static let removeSessionsBody = """
        local function removeSessions(set, user, kept, writer)
          local removed = {}
          local left = 0
          for _, key in ipairs(redis.call('SMEMBERS', set)) do
            if key ~= kept then
              if redis.call('HGET', key, 'u') == user then
                left = math.max(left, leftElsewhere(key, writer))
                redis.call('DEL', key)
                table.insert(removed, key)
              end
              redis.call('SREM', set, key)
            end
          end
          return removed, left
        end

        """

    /// What the scripts that know users share: the keys of a user's store and set of sessions
    /// (made from the key prefix, the script's last argument: keys of users the script finds in
    /// records, which no caller could name — fine on the one server this backend supports, not in
    /// a Redis Cluster), `forget` (a record deleted and taken out of its user's set, unless it
    /// is logged in as `keeping`, which it will be again), `enter` (a record put in its user's
    /// set; when it is new there — a login, a rotation — the members no longer logged in as the
    /// user are taken out: a logged-out session's record, written by `write`, which does not
    /// look for a user to keep the common write short) and `outlive` (a set made to expire no
    /// sooner than a deadline, -1: none, so that it goes once its sessions expired, and never
    /// before one of them).
    private static let userKeys = """
        local prefix = ARGV[#ARGV]
        local function sessionsOf(user) return prefix .. 'user-sessions:{' .. user .. '}' end
        local function storeOf(user) return prefix .. 'user:{' .. user .. '}' end
        local function forget(key, keeping)
          local user = redis.call('HGET', key, 'u')
          if user and user ~= keeping then redis.call('SREM', sessionsOf(user), key) end
          redis.call('DEL', key)
        end
        local function enter(set, key, user)
          if redis.call('SADD', set, key) == 0 then return end
          for _, member in ipairs(redis.call('SMEMBERS', set)) do
            if redis.call('HGET', member, 'u') ~= user then redis.call('SREM', set, member) end
          end
        end
        local function outlive(set, deadline)
          deadline = tonumber(deadline)
          if deadline < 0 then return end
          local ttl = redis.call('TTL', set)
          if ttl < 0 or tonumber(redis.call('TIME')[1]) + ttl < deadline then redis.call('EXPIREAT', set, deadline) end
        end

        """
}
