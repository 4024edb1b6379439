import AppShellHTTP
import AppShellJSON
import AppShellSessions

extension LiveApp {
    /// `GET /api/state`: what the session shows, in the vocabulary the page, curl and the tests share.
    ///
    /// `screen` is the visible screen, `root` the root's child, `stack` the navigation stack bottom
    /// first, `presented` the modal screen or null, `coordinators` the coordinator tree, `defaults`
    /// the stored defaults, `lifecycle` the last 50 events, `version` a counter every change
    /// increments. `actions` lists what the visible screen accepts, `transition` the last
    /// transition (for the browser's animation) and `view` what the visible screen adds.
    public func state(defaults: DefaultsStore) -> JSON {
        let visible = root.visibleScreen
        var actions = visible.actions
        if !actions.contains(ActionDescription.launch.name) { actions.append(ActionDescription.launch.name) }
        if !visibleRoutes().isEmpty { actions.append(ActionDescription.show.name) }
        return [
            "screen": .string(visible.name),
            "root": .string(root.child.name),
            "stack": .array((root.navigation?.viewControllers ?? []).map { .string($0.name) }),
            "presented": root.presented.map { .string($0.name) } ?? .null,
            "coordinators": coordinator.tree,
            "defaults": .object(defaults.storedValues.mapValues(\.plainJSON)),
            "lifecycle": .array(root.log.json),
            "version": .integer(root.version),
            "actions": .array(actions.map { .string($0) }),
            "transition": root.lastTransition.map {
                ["kind": .string($0.kind.rawValue), "animated": .bool($0.animated)]
            } ?? .null,
            "view": visible.state() ?? .null,
        ]
    }
}

extension LiveApp {
    /// `state(defaults:)`'s compact encoding, the lifecycle records' bytes copied from the log.
    func stateBytes(defaults: DefaultsStore) -> [UInt8] {
        state(defaults: defaults).serialized(writingMember: "lifecycle") { root.log.write(into: &$0) }
    }

    /// `state(defaults:)` as a JSON response prepared once for as long as nothing changes: the
    /// state endpoint is the hot path, and most reads see the same state again.
    func stateResponse(_ session: SessionContext) -> PreparedResponse {
        // The values are compared without making the session's defaults store.
        let values = session.storedValues
        if let cache = stateCache, cache.version == root.version, cache.values == values {
            return cache.response
        }
        let response = PreparedResponse(.json(bytes: stateBytes(defaults: session.defaults)))
        stateCache = (root.version, values, response)
        return response
    }
}

extension DefaultsValue {
    /// The value as plain JSON for people and the API: bytes as base64 text, dictionaries as
    /// objects (unlike `json`, which keeps every kind apart for the store).
    public var plainJSON: JSON {
        switch self {
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .data: return json["data"] ?? .null
        case .array(let values): return .array(values.map(\.plainJSON))
        case .dictionary(let values): return .object(values.mapValues(\.plainJSON))
        }
    }
}
