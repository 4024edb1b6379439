import AppShellJSON
import Testing

@Suite struct JSONParsingTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSON(parsing: #" {"a": [1, -2.5, true, false, null], "b": {"c": "d\u00e9\n"}, "e": 1e3} "#)
        #expect(value["a"] == [1, -2.5, true, false, nil])
        #expect(value["b"]?["c"]?.stringValue == "dé\n")
        #expect(value["e"] == .double(1000))
    }

    @Test func keepsIntegersApartFromFractions() throws {
        #expect(try JSON(parsing: "80") == .integer(80))
        #expect(try JSON(parsing: "80.5") == .double(80.5))
        #expect(try JSON(parsing: "-0") == .integer(0))
        #expect(try JSON(parsing: "99999999999999999999") == .double(1e20))
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try JSON(parsing: #""\ud83d\ude00""#) == .string("😀"))
    }

    @Test(arguments: [
        ("", "unexpected end of input at line 1, column 1"),
        ("{\"a\": 1,}", "unexpected character '}', expected a string key at line 1, column 9"),
        ("{\"a\": 1, \"a\": 2}", "duplicate key \"a\" at line 1, column 10"),
        ("[1 2]", "unexpected character '2', expected ',' or ']' at line 1, column 4"),
        ("{\n  \"port\": 80x\n}", "unexpected character 'x', expected ',' or '}' at line 2, column 13"),
        ("01", "unexpected content after the JSON value at line 1, column 2"),
        ("\"\\ud800\"", "unpaired surrogate in \\u escape at line 1, column 8"),
        ("\"a\u{01}\"", "control character in string at line 1, column 3"),
        ("tru", "unexpected end of input at line 1, column 4"),
        ("nul!", "invalid literal at line 1, column 1"),
        ("1e999", "number out of range at line 1, column 1"),
    ])
    func rejectsMalformedInputWithPosition(input: String, message: String) {
        #expect(throws: JSONError.self) { try JSON(parsing: input) }
        do {
            _ = try JSON(parsing: input)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONError.self) { try JSON(parsing: [0x22, 0xFF, 0x22]) }
    }

    /// A string without escapes is made from the input's bytes at once, one with escapes byte by
    /// byte: both give the same strings, and their errors the same places.
    @Test func stringsWithAndWithoutEscapesParseAlike() throws {
        #expect(try JSON(parsing: #"{"action":"showList","x":""}"#) == ["action": "showList", "x": ""])
        #expect(try JSON(parsing: "\"caf\u{E9} \u{1F600}\"") == .string("caf\u{E9} \u{1F600}"))
        #expect(try JSON(parsing: #""a\"b\\c\u00e9d""#) == .string("a\"b\\c\u{E9}d"))
        #expect(try JSON(parsing: #""\nstart""#) == .string("\nstart"))
        #expect(try JSON(parsing: #""end\t""#) == .string("end\t"))
        let errors: [([UInt8], String)] = [
            ([0x22, 0xFF, 0x22], "invalid UTF-8 in string at line 1, column 4"),
            ([0x22, 0x5C, 0x6E, 0xFF, 0x22], "invalid UTF-8 in string at line 1, column 6"),
            (Array(#""abc"#.utf8), "unterminated string at line 1, column 5"),
            ([0x22, 0x61, 0x62, 0x0A, 0x22], "control character in string at line 1, column 4"),
        ]
        for (input, message) in errors {
            #expect(throws: JSONError.self) { try JSON(parsing: input) }
            do {
                _ = try JSON(parsing: input)
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test func limitsNesting() throws {
        let deep =
            String(repeating: "[", count: JSON.maximumDepth + 1) + String(repeating: "]", count: JSON.maximumDepth + 1)
        #expect(throws: JSONError.self) { try JSON(parsing: deep) }
        let allowed =
            String(repeating: "[", count: JSON.maximumDepth) + String(repeating: "]", count: JSON.maximumDepth)
        #expect(try JSON(parsing: allowed).arrayValue != nil)
    }
}

@Suite struct JSONSerializationTests {
    @Test func writesCompactSortedOutput() {
        let value: JSON = ["b": [1, 2.5, nil], "a": true, "c": "x"]
        #expect(value.serializedString == #"{"a":true,"b":[1,2.5,null],"c":"x"}"#)
    }

    @Test func escapesStringsSafelyForHTML() {
        let value: JSON = .string("\"q\" \\ \n <script>&\u{01}")
        #expect(value.serializedString == #""\"q\" \\ \n \u003cscript\u003e\u0026\u0001""#)
    }

    @Test func roundTrips() throws {
        let value: JSON = ["name": "é 😀", "list": [1, -3, 0.25, false], "nested": ["empty": [:], "none": nil]]
        #expect(try JSON(parsing: value.serialized) == value)
    }

    @Test func writesNonFiniteNumbersAsNull() {
        #expect(JSON.double(.infinity).serializedString == "null")
    }

    @Test(arguments: [0, 7, -7, 10, 1_000_000, -1_000_000, Int.max, Int.min])
    func writesIntegersInDecimal(value: Int) {
        #expect(JSON.integer(value).serializedString == String(value))
    }

    /// Escapes between, before and after plain runs; bytes above 0x7F and DEL are written as they are.
    @Test func escapesAtEveryPosition() throws {
        let text = "\u{00}a\u{1F}bc\t\u{7F}é😀\r>"
        let written = JSON.string(text).serializedString
        #expect(written == #""\u0000a\u001fbc\t"# + "\u{7F}é😀" + #"\r\u003e""#)
        #expect(try JSON(parsing: Array(written.utf8)) == .string(text))
        #expect(JSON.string("").serializedString == #""""#)
    }

    /// Two members take a path of their own (one comparison): both orders, and one member or none.
    @Test func sortsTwoKeysWhicheverWayTheDictionaryHoldsThem() {
        for keys in [["screen", "event"], ["event", "screen"], ["b", "a"], ["a", "b"], ["é", "e"]] {
            var members: [String: JSON] = [:]
            for key in keys { members[key] = .string(key) }
            let sorted = keys.sorted()
            #expect(
                JSON.object(members).serializedString
                    == #"{"\#(sorted[0])":"\#(sorted[0])","\#(sorted[1])":"\#(sorted[1])"}"#)
        }
        #expect(JSON.object(["x": 1]).serializedString == #"{"x":1}"#)
        #expect(JSON.object([:]).serializedString == "{}")
    }

    /// One top-level member written by the caller: in its sorted place, nested members of the same
    /// name untouched; anything but an object with that member is serialized as it is.
    @Test func writesOneMemberThroughTheCaller() {
        let value: JSON = ["b": ["log": [1]], "log": [1, 2], "a": "x", "c": nil]
        let replaced = value.serialized(writingMember: "log") { $0.append(contentsOf: Array("[7]".utf8)) }
        #expect(String(decoding: replaced, as: UTF8.self) == #"{"a":"x","b":{"log":[1]},"c":null,"log":[7]}"#)
        let same = value.serialized(writingMember: "log") { JSON.array([1, 2]).write(into: &$0) }
        #expect(same == value.serialized)
        var called = false
        #expect(value.serialized(writingMember: "missing") { _ in called = true } == value.serialized)
        #expect(JSON.array([1]).serialized(writingMember: "log") { _ in called = true } == Array("[1]".utf8))
        #expect(!called)
    }

    @Test func sortsManyKeys() {
        var members: [String: JSON] = [:]
        for number in (0..<40).reversed() { members["k\(number)"] = .integer(number) }
        let expected = members.keys.sorted().map { #""\#($0)":\#(members[$0]!.serializedString)"# }
        #expect(JSON.object(members).serializedString == "{" + expected.joined(separator: ",") + "}")
    }
}
