import AppShellSessions
import Foundation
import Testing

/// The UserDefaults shape of `DefaultsStore`.
@Suite struct DefaultsStoreTests {
    @Test func missingKeysGiveUserDefaultsFallbacks() {
        let defaults = DefaultsStore()
        #expect(defaults.bool(forKey: "none") == false)
        #expect(defaults.integer(forKey: "none") == 0)
        #expect(defaults.double(forKey: "none") == 0)
        #expect(defaults.string(forKey: "none") == nil)
        #expect(defaults.data(forKey: "none") == nil)
        #expect(defaults.object(forKey: "none") == nil)
        #expect(defaults.hasChanges == false)
    }

    @Test func storesEachType() {
        let defaults = DefaultsStore()
        defaults.set(true, forKey: "isLogin")
        defaults.set(1, forKey: "viewType")
        defaults.set(2.5, forKey: "ratio")
        defaults.set("demo", forKey: "username")
        defaults.set(Data([1, 2, 3]), forKey: "blob")
        defaults.set(["a", 1, true] as [Any], forKey: "list")
        defaults.set(["k": "v"] as [String: Any], forKey: "map")
        #expect(defaults.bool(forKey: "isLogin"))
        #expect(defaults.integer(forKey: "viewType") == 1)
        #expect(defaults.double(forKey: "ratio") == 2.5)
        #expect(defaults.string(forKey: "username") == "demo")
        #expect(defaults.data(forKey: "blob") == Data([1, 2, 3]))
        #expect(defaults.array(forKey: "list")?.count == 3)
        #expect(defaults.dictionary(forKey: "map")?["k"] as? String == "v")
        #expect(defaults.object(forKey: "username") as? String == "demo")
        #expect(defaults.hasChanges)
    }

    @Test func convertsBetweenKindsLikeUserDefaults() {
        let defaults = DefaultsStore()
        defaults.set("YES", forKey: "yes")
        defaults.set("42", forKey: "answer")
        defaults.set(3.9, forKey: "fraction")
        defaults.set(true, forKey: "flag")
        defaults.set(7, forKey: "seven")
        #expect(defaults.bool(forKey: "yes"))
        #expect(defaults.integer(forKey: "answer") == 42)
        #expect(defaults.bool(forKey: "answer"))
        #expect(defaults.integer(forKey: "fraction") == 3)
        #expect(defaults.integer(forKey: "flag") == 1)
        #expect(defaults.string(forKey: "seven") == "7")
        #expect(defaults.double(forKey: "seven") == 7)
        #expect(defaults.data(forKey: "seven") == nil)
    }

    @Test func registeredValuesAreFallbacksNeverStored() {
        let defaults = DefaultsStore()
        defaults.register(defaults: ["viewType": 0, "theme": "light"])
        #expect(defaults.integer(forKey: "viewType") == 0)
        #expect(defaults.string(forKey: "theme") == "light")
        #expect(defaults.hasChanges == false)
        #expect(defaults.storedValues.isEmpty)
        defaults.set(1, forKey: "viewType")
        #expect(defaults.integer(forKey: "viewType") == 1)
        defaults.removeObject(forKey: "viewType")
        #expect(defaults.integer(forKey: "viewType") == 0)
        let all = defaults.dictionaryRepresentation()
        #expect(all["theme"] as? String == "light")
        #expect(defaults.storedValues.isEmpty)
    }

    @Test func settingTheSameValueIsNoChange() {
        let defaults = DefaultsStore(values: ["a": .integer(1)])
        defaults.set(1, forKey: "a")
        defaults.removeObject(forKey: "missing")
        #expect(defaults.hasChanges == false)
        defaults.set(nil, forKey: "a")
        #expect(defaults.hasChanges)
        #expect(defaults.object(forKey: "a") == nil)
    }

    @Test func refusesNonPropertyListValues() {
        struct Custom {}
        let defaults = DefaultsStore()
        #expect(defaults.set(Custom(), forKey: "x") == false)
        #expect(defaults.object(forKey: "x") == nil)
        #expect(defaults.hasChanges == false)
    }

    @Test func valuesSurviveTheirStoredEncoding() {
        let values: [String: DefaultsValue] = [
            "b": .bool(false), "i": .integer(-5), "d": .double(1.0), "s": .string("é\"\n"),
            "data": .data([0, 255, 10]), "a": .array([.integer(1), .dictionary(["x": .data([])])]),
            "m": .dictionary(["data": .string("not bytes")]),
        ]
        #expect(DefaultsValue.decode(DefaultsValue.encode(values)) == values)
    }

    @Test func bytesAreStandardPaddedBase64() {
        #expect(DefaultsValue.data([0, 1, 255]).json == .object(["data": .string("AAH/")]))
        #expect(DefaultsValue.data([0, 1]).json == .object(["data": .string("AAE=")]))
        #expect(DefaultsValue(json: .object(["data": .string("AAE=")])) == .data([0, 1]))
        // Not what `json` writes: no padding, the URL alphabet, a space.
        for text in ["AAE", "AA_-", "AA E="] {
            #expect(DefaultsValue(json: .object(["data": .string(text)])) != .data([0, 1]), "\(text)")
        }
    }
}
