/// The Lua scripts the store runs (each atomic on the server).
enum RedisScript {
    /// KEYS[1] is checked, every key deleted, and the last one written: ARGV is the expected
    /// version of KEYS[1] (empty: any; a negative one — not known — never matches), the values,
    /// created, accessed, whether there is a snapshot, the snapshot, and the expiry deadline (-1:
    /// none). Returns the new version, or -1 when KEYS[1] is not at the expected one.
    static let write = """
        local version = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
        if ARGV[1] ~= '' and version ~= tonumber(ARGV[1]) then return -1 end
        for _, key in ipairs(KEYS) do redis.call('DEL', key) end
        local target = KEYS[#KEYS]
        redis.call('HSET', target, 'v', ARGV[2], 'c', ARGV[3], 'a', ARGV[4], 'n', version + 1)
        if ARGV[5] == '1' then redis.call('HSET', target, 's', ARGV[6]) end
        if ARGV[7] ~= '-1' then redis.call('EXPIREAT', target, ARGV[7]) end
        return version + 1
        """
    /// KEYS[1]: the record; ARGV: accessed, idle seconds, absolute seconds (-1: no expiry).
    static let touch = """
        local created = redis.call('HGET', KEYS[1], 'c')
        if not created then return 0 end
        redis.call('HSET', KEYS[1], 'a', ARGV[1])
        local idle = tonumber(ARGV[2])
        if idle >= 0 then
          redis.call('EXPIREAT', KEYS[1], math.min(tonumber(ARGV[1]) + idle, tonumber(created) + tonumber(ARGV[3])))
        end
        return 1
        """
    /// KEYS[1] moved to KEYS[2] (replacing it), when KEYS[1] exists.
    static let rename = """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        redis.call('RENAME', KEYS[1], KEYS[2])
        return 1
        """
    /// KEYS[1] deleted when its access is before ARGV[1] or its creation before ARGV[2].
    static let removeIfExpired = """
        local times = redis.call('HMGET', KEYS[1], 'c', 'a')
        if not times[1] then return 0 end
        if tonumber(times[2]) < tonumber(ARGV[1]) or tonumber(times[1]) < tonumber(ARGV[2]) then
          redis.call('DEL', KEYS[1])
          return 1
        end
        return 0
        """
}
