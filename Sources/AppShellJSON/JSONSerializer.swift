extension JSON {
    /// The compact UTF-8 encoding of this value; object keys are written in sorted order so the
    /// same value always gives the same bytes.
    public var serialized: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(into: &output)
        return output
    }

    /// The compact encoding of this object with the value of its member `key` written by
    /// `writeValue` instead: for a value that is kept encoded already (the records of a log whose
    /// bytes were written once). `writeValue` must append exactly one JSON value. The bytes are
    /// those of `serialized` when it appends what `serialized` would write for that member. A value
    /// that is not an object, or has no member `key`, is serialized as it is.
    public func serialized(writingMember key: String, with writeValue: (inout [UInt8]) -> Void) -> [UInt8] {
        guard case .object(let members) = self, members[key] != nil else { return serialized }
        var output: [UInt8] = []
        output.reserveCapacity(256)
        JSON.write(members, into: &output, replacing: key, with: writeValue)
        return output
    }

    /// The compact encoding as a string.
    public var serializedString: String { String(decoding: serialized, as: UTF8.self) }

    /// Appends the compact encoding of this value to `output`.
    public func write(into output: inout [UInt8]) {
        switch self {
        case .null: JSON.append("null", to: &output)
        case .bool(let value): JSON.append(value ? "true" : "false", to: &output)
        case .integer(let value): JSON.append(value, to: &output)
        case .double(let value):
            if value.isFinite {
                output.append(contentsOf: String(value).utf8)
            } else {
                JSON.append("null", to: &output)
            }
        case .string(let value): JSON.writeString(value, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for index in elements.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                elements[index].write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members): JSON.write(members, into: &output, replacing: nil) { _ in }
        }
    }

    /// Appends an object's members sorted by key; the value of the member `replaced`, if any, is
    /// written by `writeReplaced` (which is not called when `replaced` is `nil`).
    private static func write(
        _ members: [String: JSON], into output: inout [UInt8], replacing replaced: String?,
        with writeReplaced: (inout [UInt8]) -> Void
    ) {
        output.append(UInt8(ascii: "{"))
        // The members' positions, sorted by key in stack memory: each member is then read by
        // its position, without hashing its key again.
        withUnsafeTemporaryAllocation(of: [String: JSON].Index.self, capacity: members.count) { buffer in
            var order = buffer
            let (_, filled) = order.initialize(from: members.indices)
            defer { order.baseAddress?.deinitialize(count: filled) }
            if filled == 2 {
                // Two members (a lifecycle record; 100 of them in an action's state and
                // snapshot): one comparison, without the sort's machinery.
                if members.keys[order[1]] < members.keys[order[0]] { order.swapAt(0, 1) }
            } else if filled > 2 {
                order.sort { members.keys[$0] < members.keys[$1] }
            }
            for position in 0..<filled {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                let member = members[order[position]]
                JSON.writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                if let replaced, member.key == replaced {
                    writeReplaced(&output)
                } else {
                    member.value.write(into: &output)
                }
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Appends `text` as a quoted JSON string, escaping quotes, backslashes and control
    /// characters (and `<`, `>`, `&` so the output is also safe inside HTML).
    public static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        writeEscaped(text, into: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `text` escaped as `writeString` does, without the quotes around it: for a writer
    /// that writes the quotes with the literals around the string (`"label":"` … `","type":`), one
    /// append instead of three.
    public static func writeEscaped(_ text: String, into output: inout [UInt8]) {
        // Read in place (no copy of the string, as `withUTF8` on a `var` makes): every native
        // string, small ones included, is contiguous.
        let written = text.utf8.withContiguousStorageIfAvailable { bytes in
            writeEscaped(bytes, into: &output)
        }
        if written == nil {
            var text = text
            text.withUTF8 { writeEscaped($0, into: &output) }
        }
    }

    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        // Runs of bytes that need no escape are copied whole.
        var runStart = 0
        for index in bytes.indices {
            let byte = bytes[index]
            guard needsEscape(byte) else { continue }
            if runStart < index {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            }
            appendEscape(of: byte, to: &output)
            runStart = index + 1
        }
        if runStart == 0 {
            output.append(contentsOf: bytes)
        } else if runStart < bytes.count {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
    }

    /// Whether `byte` is written escaped: a control character, `"`, `\`, `<`, `>` or `&`.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case 0..<0x20, UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"):
            return true
        default:
            return false
        }
    }

    /// Appends the escape sequence of `byte` (one that `needsEscape`).
    private static func appendEscape(of byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            output.append(UInt8(ascii: "u"))
            output.append(UInt8(ascii: "0"))
            output.append(UInt8(ascii: "0"))
            output.append(hexDigit(byte >> 4))
            output.append(hexDigit(byte & 0x0F))
        }
    }

    /// One digit of a `\u00XX` escape (AppShellJSON links no C library that would write it).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Appends the bytes of a literal (for writers of compact JSON member by member).
    public static func append(_ literal: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends `value` in decimal, without making a string of it.
    private static func append(_ value: Int, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        // The magnitude as unsigned: `Int.min` has no positive counterpart.
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 20 digits of UInt64.max
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }
}
