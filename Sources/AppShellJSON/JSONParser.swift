/// Why a text is not the JSON it should be, with the line and column where that was found.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "unexpected character '}'".
    public let reason: String
    /// The 1-based line of the problem.
    public let line: Int
    /// The 1-based column (in bytes) of the problem.
    public let column: Int

    /// A one-line description: the reason and where.
    public var description: String { "\(reason) at line \(line), column \(column)" }
}

extension JSON {
    /// The deepest nesting of arrays and objects the parser accepts; deeper input is an error,
    /// not a stack overflow.
    public static let maximumDepth = 256

    /// Parses one JSON value (RFC 8259) from UTF-8 bytes; trailing content other than
    /// whitespace, duplicate object keys, and invalid UTF-8 are errors.
    public init<Bytes: Collection<UInt8>>(parsing bytes: Bytes) throws(JSONError) {
        var parser = JSONParser(bytes: Array(bytes))
        self = try parser.parseDocument()
    }

    /// Parses one JSON value from a string.
    public init(parsing text: String) throws(JSONError) {
        try self.init(parsing: Array(text.utf8))
    }
}

/// A recursive-descent parser over a byte array.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws(JSONError) -> JSON {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index != bytes.count { throw error("unexpected content after the JSON value") }
        return value
    }

    private mutating func parseValue() throws(JSONError) -> JSON {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw unexpected()
        }
    }

    private mutating func parseObject() throws(JSONError) -> JSON {
        try enterContainer()
        index += 1
        var members: [String: JSON] = [:]
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw unexpected(expecting: "a string key") }
            let keyStart = index
            let key = try parseString()
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw unexpected(expecting: "':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            if members.updateValue(value, forKey: key) != nil {
                throw error("duplicate key \"\(key)\"", at: keyStart)
            }
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
            } else if peek(UInt8(ascii: "}")) {
                index += 1
                depth -= 1
                return .object(members)
            } else {
                throw unexpected(expecting: "',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONError) -> JSON {
        try enterContainer()
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
            } else if peek(UInt8(ascii: "]")) {
                index += 1
                depth -= 1
                return .array(elements)
            } else {
                throw unexpected(expecting: "',' or ']'")
            }
        }
    }

    private mutating func enterContainer() throws(JSONError) {
        depth += 1
        if depth > JSON.maximumDepth { throw error("nesting deeper than \(JSON.maximumDepth)") }
    }

    private mutating func parseLiteral(_ word: StaticString, _ value: JSON) throws(JSONError) -> JSON {
        let count = word.utf8CodeUnitCount
        for offset in 0..<count {
            guard index + offset < bytes.count else { throw error("unexpected end of input", at: bytes.count) }
            if bytes[index + offset] != word.utf8Start[offset] { throw error("invalid literal", at: index) }
        }
        index += count
        return value
    }

    private mutating func parseNumber() throws(JSONError) -> JSON {
        let start = index
        var isInteger = true
        if peek(UInt8(ascii: "-")) { index += 1 }
        if peek(UInt8(ascii: "0")) {
            index += 1
        } else if index < bytes.count, isDigit(bytes[index]) {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        } else {
            throw unexpected(expecting: "a digit")
        }
        if peek(UInt8(ascii: ".")) {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw unexpected(expecting: "a digit") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw unexpected(expecting: "a digit") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else {
            throw error("number out of range", at: start)
        }
        return .double(value)
    }

    private mutating func parseString() throws(JSONError) -> String {
        index += 1  // opening quote
        // Most strings (keys, action names) have no escape: made from the input's bytes at once,
        // without collecting them byte by byte into an array first.
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
            bytes[index] >= 0x20
        {
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            index += 1
            guard let text = String(validating: bytes[start..<(index - 1)], as: UTF8.self) else {
                throw error("invalid UTF-8 in string")
            }
            return text
        }
        var scalars = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scalars, as: UTF8.self) else {
                    throw error("invalid UTF-8 in string")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &scalars)
            case 0..<0x20:
                throw error("control character in string")
            default:
                scalars.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseEscape(into output: inout [UInt8]) throws(JSONError) {
        guard index < bytes.count else { throw error("unterminated string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): output.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard peek(UInt8(ascii: "\\")), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("unpaired surrogate in \\u escape") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("unpaired surrogate in \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
            output.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw error("invalid escape", at: index - 1)
        }
    }

    private mutating func parseHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func unexpected(expecting expected: String? = nil) -> JSONError {
        guard index < bytes.count else { return error("unexpected end of input") }
        let byte = bytes[index]
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte \(byte)"
        let suffix = expected.map { ", expected \($0)" } ?? ""
        return error("unexpected character \(shown)\(suffix)")
    }

    private func error(_ reason: String, at position: Int? = nil) -> JSONError {
        let end = min(position ?? index, bytes.count)
        var line = 1
        var column = 1
        for byte in bytes[0..<end] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return JSONError(reason: reason, line: line, column: column)
    }
}
