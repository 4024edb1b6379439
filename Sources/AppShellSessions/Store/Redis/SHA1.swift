/// SHA-1 of `message`, in lowercase hexadecimal: the name Redis gives a script (`EVALSHA`,
/// `SCRIPT LOAD`'s reply). Computed once per script, off the request path; not used for anything
/// that needs a secure hash.
func sha1Hex(_ message: [UInt8]) -> String {
    var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
    )
    var padded = message
    padded.append(0x80)
    while padded.count % 64 != 56 { padded.append(0) }
    let bits = UInt64(message.count) &* 8
    for shift in stride(from: 56, through: 0, by: -8) {
        padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
    }
    var words = [UInt32](repeating: 0, count: 80)
    for block in stride(from: 0, to: padded.count, by: 64) {
        for index in 0..<16 {
            let start = block + index * 4
            words[index] =
                UInt32(padded[start]) << 24 | UInt32(padded[start + 1]) << 16 | UInt32(padded[start + 2]) << 8
                | UInt32(padded[start + 3])
        }
        for index in 16..<80 {
            let mixed = words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16]
            words[index] = mixed << 1 | mixed >> 31
        }
        var (a, b, c, d, e) = state
        for index in 0..<80 {
            let (f, k): (UInt32, UInt32)
            switch index {
            case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
            case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
            case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
            default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
            }
            let next = (a << 5 | a >> 27) &+ f &+ e &+ k &+ words[index]
            (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, next)
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for word in [state.0, state.1, state.2, state.3, state.4] {
        for shift in stride(from: 28, through: 0, by: -4) { text.append(digits[Int(word >> UInt32(shift) & 0xF)]) }
    }
    return String(decoding: text, as: UTF8.self)
}
