// The lease: the script that grants it, and what the writing scripts share to respect it.

extension RedisScript {
    /// Checks a session in memory against the store and, when asked, grants its lease (see
    /// `RedisLease`). KEYS[1]: the session's record; KEYS[2], when it is logged in: its user's
    /// store. ARGV: the asking instance, the lease's length in milliseconds, what is asked (`1`:
    /// the lease; `0`: nothing — the instance waits to write, and a lease of another instance
    /// found makes the record and store contested, and asks the holder to give it up), how long a
    /// contested record or store gets no lease, in milliseconds, and what the holders' relay
    /// channels begin with (`RedisLease`: the holder's name ends it; a message `release` names
    /// the key).
    ///
    /// A lease is granted when the instance asked for the record's last lease too (`lr`: two
    /// requests in a row served by it, so traffic spread over instances in turn never gets one),
    /// no other instance holds one on the record or the store, and neither was contested
    /// recently (`lc`). It covers both (a user's store's lease is only ever lengthened).
    ///
    /// Returns the record's version (`false`: no record), the store's (0: none), 1 when the lease
    /// was granted, and the milliseconds left of another instance's lease on either.
    static let lease = RedisScript(
        leaseFunctions + """
            local holder, length, asks, quiet = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', tonumber(ARGV[4])
            local now = nowMilliseconds()
            local function contest(key, lease)
              redis.call('HSET', key, 'lc', now)
              redis.call('PUBLISH', ARGV[5] .. lease[2], 'lease\\nrelease\\n' .. key .. '\\n')
            end
            local record = redis.call('HMGET', KEYS[1], 'n', 'lh', 'le', 'lr', 'lc')
            if not record[1] then return {false, 0, 0, 0} end
            local function recent(time) return time and now - tonumber(time) < quiet end
            local function left(lease) return leaseLeft(lease[2], lease[3], holder, now) end
            local recordLeft = left(record)
            local grant = asks and recordLeft == 0 and record[4] == holder and not recent(record[5])
            if asks and record[4] ~= holder then redis.call('HSET', KEYS[1], 'lr', holder) end
            if not asks and recordLeft > 0 then contest(KEYS[1], record) end
            local storeVersion, storeLeft = 0, 0
            if KEYS[2] then
              local store = redis.call('HMGET', KEYS[2], 'n', 'lh', 'le', 'lr', 'lc')
              storeVersion = tonumber(store[1] or '0')
              storeLeft = left(store)
              grant = grant and storeLeft == 0 and not recent(store[5])
              if not asks and storeLeft > 0 then contest(KEYS[2], store) end
              if grant then
                local expiry = now + length
                if store[2] == holder and tonumber(store[3]) > expiry then expiry = tonumber(store[3]) end
                redis.call('HSET', KEYS[2], 'lh', holder, 'le', expiry)
              end
            end
            if grant then redis.call('HSET', KEYS[1], 'lh', holder, 'le', now + length) end
            return {record[1], storeVersion, grant and 1 or 0, math.max(recordLeft, storeLeft)}
            """)

    /// KEYS[1]: a record or a user's store; ARGV[1]: the instance giving its lease up (another
    /// instance waits for it). Returns 1 when it held it.
    static let releaseLease = RedisScript(
        """
        if redis.call('HGET', KEYS[1], 'lh') ~= ARGV[1] then return 0 end
        redis.call('HDEL', KEYS[1], 'lh', 'le')
        return 1
        """)

    /// What the scripts that respect leases share: the server's time in milliseconds, what is left
    /// of a lease held by another instance than `holder` (0: none, or expired), the same of a
    /// key's lease (`leftElsewhere`), and `keepLease` (a record deleted and written again keeps
    /// the lease its writer held, and who asked last and when it was contested: the fields `lh`,
    /// `le`, `lr`, `lc` read from it before).
    static let leaseFunctions = """
        local function nowMilliseconds()
          local time = redis.call('TIME')
          return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        end
        local function leaseLeft(leaseHolder, expiry, holder, now)
          if not leaseHolder or leaseHolder == holder then return 0 end
          return math.max(0, tonumber(expiry) - (now or nowMilliseconds()))
        end
        local function leftElsewhere(key, holder)
          local lease = redis.call('HMGET', key, 'lh', 'le')
          return leaseLeft(lease[1], lease[2], holder)
        end
        local function keepLease(key, lease, holder)
          if lease[1] == holder then redis.call('HSET', key, 'lh', lease[1], 'le', lease[2]) end
          if lease[3] then redis.call('HSET', key, 'lr', lease[3]) end
          if lease[4] then redis.call('HSET', key, 'lc', lease[4]) end
        end

        """
}
