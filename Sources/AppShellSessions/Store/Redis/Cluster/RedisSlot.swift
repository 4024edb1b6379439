/// Where a key lives in a Redis Cluster: its hash slot, CRC16 (XMODEM) of the key — or of its
/// hash tag, the text between the first `{` and the next `}` when that is not empty — modulo
/// 16384, as the cluster specification has it. Keys that share a tag share a slot, and so a node:
/// a script or a pipeline may use them together.
enum RedisSlot {
    /// The number of slots of a cluster.
    static let count = 16384

    /// The slot of `key`.
    @inline(__always)
    static func of(_ key: [UInt8]) -> Int {
        key.withUnsafeBufferPointer { of($0) }
    }

    /// The slot of the key whose bytes are `key`.
    static func of(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        var start = 0
        var end = key.count
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
            let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            start = open + 1
            end = close
        }
        var crc: UInt16 = 0
        for index in start..<end {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ key[index])]
        }
        return Int(crc) & (count - 1)
    }

    /// The CRC16 of every byte (polynomial 0x1021, as XMODEM has it), for one lookup per byte.
    private static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}
