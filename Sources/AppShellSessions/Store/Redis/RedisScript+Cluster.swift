/// The scripts the store runs on a Redis Cluster instead of those whose keys span slots
/// (`writeWithUser`, `rename`, `remove`, `removeIfExpired`, `removeSessions`, `removeAccount`,
/// `insertAccount`): each touches the keys of one slot — a session's (`<prefix>{<store key>}`) or
/// a user's (`account:{u}`, `user:{u}`, `user-sessions:{u}`, one hash tag `u`) — and the backend
/// runs them as steps in a safe order (`RedisDefaultsBackend+Cluster.swift`).
///
/// A user's set of sessions is an index that may name more than its sessions (a member is checked
/// before use, as on one server): so a session is entered in it before it is written, and left
/// there when it is deleted, and the set's walk that drops members no longer logged in as the
/// user (`enter`), which would read other slots, is not made (the set expires after its last
/// session can).
///
/// A pending write (a session's write with its user's store) marks the session's version field
/// `n` with `p<version>:<deadline ms>:<token>`, which no version check matches: see `claim`,
/// `clusterUserWrite` and `recover`.
extension RedisScript {
    /// Every script below: what a cluster's node connections load.
    static let cluster = [
        clusterWrite, clusterEnter, claim, clusterUserWrite, finish, abandon, recover, clusterRemoveIfExpired,
        removeIfUser, deleteIfVersion, clusterInsertAccount,
    ]

    /// `write` of one key (checked and written) that also sets the user `u` (ARGV[8], '' none).
    /// ARGV 1 to 7 as `write`'s. An unconditional write (ARGV[1] '') replaces a pending one.
    static let clusterWrite = RedisScript(
        """
        local stored = redis.call('HGET', KEYS[1], 'n') or '0'
        local version = tonumber(stored)
        if ARGV[1] ~= '' and version ~= tonumber(ARGV[1]) then return -1 end
        version = version or tonumber(string.match(stored, '^p(%d+):')) or 0
        redis.call('DEL', KEYS[1])
        redis.call('HSET', KEYS[1], 'v', ARGV[2], 'c', ARGV[3], 'a', ARGV[4], 'n', version + 1)
        if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 's', ARGV[6]) end
        if ARGV[7] ~= '-1' then redis.call('EXPIREAT', KEYS[1], ARGV[7]) end
        if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'u', ARGV[8]) end
        return version + 1
        """)

    /// KEYS[1]: a user's set of sessions; ARGV: a session's key, its absolute deadline (-1: none).
    /// Adds the key and makes the set live at least until the deadline.
    static let clusterEnter = RedisScript(
        """
        redis.call('SADD', KEYS[1], ARGV[1])
        local deadline = tonumber(ARGV[2])
        if deadline < 0 then return 1 end
        local ttl = redis.call('TTL', KEYS[1])
        if ttl < 0 or tonumber(redis.call('TIME')[1]) + ttl < deadline then redis.call('EXPIREAT', KEYS[1], deadline) end
        return 1
        """)

    /// KEYS[1]: a session; ARGV: the expected version ('' any), how long the claim holds (ms), a
    /// token, the user whose store is written with it, then the record's new content as
    /// `clusterWrite`'s ARGV 2 to 8. When the session is at the version, marks it pending (`n` =
    /// `p<version>:<deadline ms, the server's clock>:<token>`, which no version check matches, so
    /// no other checked write passes until `finish`, `abandon` or `recover`), keeps the new
    /// content beside the record (`p1` … `p7`, and the user `pw`: what `recover` finishes it with
    /// if the writer stops after the user's store was written) and returns the marker; else -1.
    /// A session made here (none was stored) expires a day after the deadline unless finished.
    static let claim = RedisScript(
        """
        local existed = redis.call('EXISTS', KEYS[1]) == 1
        local version = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
        if not version or (ARGV[1] ~= '' and version ~= tonumber(ARGV[1])) then return -1 end
        local time = redis.call('TIME')
        local deadline = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(ARGV[2])
        local marker = 'p' .. version .. ':' .. deadline .. ':' .. ARGV[3]
        redis.call('HSET', KEYS[1], 'n', marker, 'pw', ARGV[4], 'p1', ARGV[5], 'p2', ARGV[6], 'p3', ARGV[7],
          'p4', ARGV[8], 'p5', ARGV[9], 'p6', ARGV[10], 'p7', ARGV[11])
        if not existed then redis.call('PEXPIREAT', KEYS[1], deadline + 86400000) end
        return marker
        """)

    /// KEYS: a user's store, set of sessions and set of committed claims; ARGV: the store's
    /// expected version, its values, a session's key to enter in the set ('' none), its absolute
    /// deadline (-1: none), the claim's token and deadline (Unix ms). Returns the store's new
    /// version, or -1 with nothing written (not at the version, or the claim's deadline passed:
    /// `recover` may be undoing it). The token is kept a minute past the deadline (the claims
    /// older are dropped at each write), where `recover` finds that the store was written.
    static let clusterUserWrite = RedisScript(
        """
        local version = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
        if version ~= tonumber(ARGV[1]) then return -1 end
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        if now >= tonumber(ARGV[6]) then return -1 end
        redis.call('HSET', KEYS[1], 'v', ARGV[2], 'n', version + 1)
        redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
        redis.call('ZADD', KEYS[3], tonumber(ARGV[6]) + 60000, ARGV[5])
        redis.call('PEXPIREAT', KEYS[3], tonumber(ARGV[6]) + 60000)
        if ARGV[3] ~= '' then
          redis.call('SADD', KEYS[2], ARGV[3])
          local deadline = tonumber(ARGV[4])
          local ttl = redis.call('TTL', KEYS[2])
          if deadline >= 0 and (ttl < 0 or tonumber(time[1]) + ttl < deadline) then
            redis.call('EXPIREAT', KEYS[2], deadline)
          end
        end
        return version + 1
        """)

    /// KEYS[1]: a session `claim`ed; ARGV: the marker, the claimed version, then `clusterWrite`'s
    /// ARGV 2 to 8 (values, created, accessed, snapshot or not, snapshot, deadline, user). Writes
    /// the record at the version + 1 when the marker is still there; returns the new version, or
    /// 0 when it is not (a write without a version check, or a removal, came after the claim:
    /// it is the later one, and stands). With no marker ('') it writes whatever is there: a
    /// rotation's new key, at the version after the old one's, as `write` does on one server.
    static let finish = RedisScript(
        """
        if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'n') ~= ARGV[1] then return 0 end
        local version = tonumber(ARGV[2]) + 1
        redis.call('DEL', KEYS[1])
        redis.call('HSET', KEYS[1], 'v', ARGV[3], 'c', ARGV[4], 'a', ARGV[5], 'n', version)
        if ARGV[6] == '1' then redis.call('HSET', KEYS[1], 's', ARGV[7]) end
        if ARGV[8] ~= '-1' then redis.call('EXPIREAT', KEYS[1], ARGV[8]) end
        if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'u', ARGV[9]) end
        return version
        """)

    /// KEYS[1]: a session `claim`ed; ARGV: the marker, the claimed version, whether to delete the
    /// session ('1': a rotation moved it) rather than give it back its version. Does nothing when
    /// the marker is gone.
    static let abandon = RedisScript(
        """
        if redis.call('HGET', KEYS[1], 'n') ~= ARGV[1] then return 0 end
        if ARGV[3] == '1' or redis.call('HEXISTS', KEYS[1], 'c') == 0 then
          redis.call('DEL', KEYS[1])
        else
          redis.call('HSET', KEYS[1], 'n', ARGV[2])
          redis.call('HDEL', KEYS[1], 'pw', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7')
        end
        return 1
        """)

    /// KEYS[1]: a session; ARGV: its pending marker as read, whether the user's store was
    /// written with it ('1': the claim's token is among the user's committed claims). Once the
    /// marker's deadline is a second past (its writer stopped between steps; the user's store
    /// refuses the claim after the deadline, so the answer read cannot change), the write is
    /// finished with the content kept by `claim` when the store was written, else undone (the
    /// session gets back its version, or goes when the claim made it). Returns 1 when it did.
    static let recover = RedisScript(
        """
        if redis.call('HGET', KEYS[1], 'n') ~= ARGV[1] then return 0 end
        local version, deadline = string.match(ARGV[1], '^p(%d+):(%d+):')
        local time = redis.call('TIME')
        if tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) < tonumber(deadline) + 1000 then return 0 end
        if ARGV[2] == '1' then
          local p = redis.call('HMGET', KEYS[1], 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7')
          redis.call('DEL', KEYS[1])
          redis.call('HSET', KEYS[1], 'v', p[1], 'c', p[2], 'a', p[3], 'n', tonumber(version) + 1)
          if p[4] == '1' then redis.call('HSET', KEYS[1], 's', p[5]) end
          if p[6] ~= '-1' then redis.call('EXPIREAT', KEYS[1], p[6]) end
          if p[7] ~= '' then redis.call('HSET', KEYS[1], 'u', p[7]) end
        elseif redis.call('HEXISTS', KEYS[1], 'c') == 0 then
          redis.call('DEL', KEYS[1])
        else
          redis.call('HSET', KEYS[1], 'n', version)
          redis.call('HDEL', KEYS[1], 'pw', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7')
        end
        return 1
        """)

    /// `removeIfExpired` without the user's set (the member left is checked before use).
    static let clusterRemoveIfExpired = RedisScript(
        """
        local times = redis.call('HMGET', KEYS[1], 'c', 'a')
        if not times[1] then return 0 end
        if tonumber(times[2]) < tonumber(ARGV[1]) or tonumber(times[1]) < tonumber(ARGV[2]) then
          redis.call('DEL', KEYS[1])
          return 1
        end
        return 0
        """)

    /// KEYS[1]: a session; ARGV[1]: a user. Deletes the session when it is logged in as the user;
    /// returns 1 then, else 0.
    static let removeIfUser = RedisScript(
        """
        if redis.call('HGET', KEYS[1], 'u') ~= ARGV[1] then return 0 end
        redis.call('DEL', KEYS[1])
        return 1
        """)

    /// KEYS[1]: a session; ARGV[1]: its version field as read. Deletes it when it still is.
    static let deleteIfVersion = RedisScript(
        """
        if redis.call('HGET', KEYS[1], 'n') ~= ARGV[1] then return 0 end
        redis.call('DEL', KEYS[1])
        return 1
        """)

    /// `insertAccount` of the account's key alone (the set of names is written before it).
    static let clusterInsertAccount = RedisScript(
        """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        redis.call('HSET', KEYS[1], 'h', ARGV[1], 'c', ARGV[2])
        return 1
        """)
}
