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
    /// `userDefaults`, when the session is logged in, is the user's store.
    package func state(defaults: DefaultsStore, userDefaults: DefaultsStore? = nil) -> JSON {
        let visible = root.visibleScreen
        let actions = visibleActionNames()
        var members: [String: JSON] = [
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
        if let userDefaults { members["userDefaults"] = .object(userDefaults.storedValues.mapValues(\.plainJSON)) }
        return .object(members)
    }
}

extension LiveApp {
    /// `state(defaults:)`'s compact encoding — the same bytes as `state(defaults:).serialized` —
    /// written without building its tree: the members in the sorted order `JSON` writes an
    /// object's in, the lifecycle records' bytes copied from the log. Every action and every
    /// changed read answers with it; building the tree (eleven members hashed into a dictionary,
    /// then sorted again to be written) was 40 000 of an action's 208 000 instructions
    /// (callgrind, the Performance article).
    func stateBytes(defaults: DefaultsStore, userDefaults: DefaultsStore? = nil) -> [UInt8] {
        let visible = root.visibleScreen
        var output: [UInt8] = []
        output.reserveCapacity(root.log.byteCount + 512)
        JSON.append("{\"actions\":[", to: &output)
        // `visibleActionNames()`, written as it is found: that array, the screen's kept names with
        // `launch` appended, was a copy at every state (1 300 instructions, callgrind).
        let offered = visible.actions
        var offersLaunch = false
        for index in offered.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSON.writeString(offered[index], into: &output)
            if offered[index] == ActionDescription.launchName { offersLaunch = true }
        }
        if !offersLaunch {
            if !offered.isEmpty { output.append(UInt8(ascii: ",")) }
            JSON.writeString(ActionDescription.launchName, into: &output)
        }
        if !routes.isEmpty && !visibleRoutes().isEmpty { JSON.append(",\"show\"", to: &output) }
        JSON.append("],\"coordinators\":", to: &output)
        output.append(contentsOf: coordinatorTree.bytes)
        JSON.append(",\"defaults\":", to: &output)
        JSON.object(defaults.storedValues.mapValues(\.plainJSON)).write(into: &output)
        JSON.append(",\"lifecycle\":", to: &output)
        root.log.write(into: &output)
        JSON.append(",\"presented\":", to: &output)
        if let presented = root.presented {
            JSON.writeString(presented.name, into: &output)
        } else {
            JSON.append("null", to: &output)
        }
        JSON.append(",\"root\":", to: &output)
        JSON.writeString(root.child.name, into: &output)
        JSON.append(",\"screen\":", to: &output)
        JSON.writeString(visible.name, into: &output)
        JSON.append(",\"stack\":[", to: &output)
        if let stack = root.navigation?.viewControllers {
            for index in stack.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSON.writeString(stack[index].name, into: &output)
            }
        }
        JSON.append("],\"transition\":", to: &output)
        if let transition = root.lastTransition {
            JSON.append(
                transition.animated ? "{\"animated\":true,\"kind\":" : "{\"animated\":false,\"kind\":", to: &output)
            JSON.writeString(transition.kind.rawValue, into: &output)
            output.append(UInt8(ascii: "}"))
        } else {
            JSON.append("null", to: &output)
        }
        if let userDefaults {
            JSON.append(",\"userDefaults\":", to: &output)
            JSON.object(userDefaults.storedValues.mapValues(\.plainJSON)).write(into: &output)
        }
        JSON.append(",\"version\":", to: &output)
        JSON.integer(root.version).write(into: &output)
        JSON.append(",\"view\":", to: &output)
        if let rendered = visible.renderedView {
            rendered.writeJSON(of: visible, into: &output)
        } else {
            (visible.state() ?? .null).write(into: &output)
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// The coordinator tree's compact encoding (`Coordinator.tree`'s), made again only when a
    /// coordinator joined or left it: every state and snapshot has the tree, and building its
    /// dictionaries and writing them again cost every action (callgrind, the Performance article).
    /// The bytes are all it keeps: the tree's dictionaries, kept beside them, were 520 of the
    /// 5 400 bytes a visitor's session held (massif, bench/RESULTS.md).
    var coordinatorTree: CoordinatorTree {
        if let cache = treeCache, cache.generation == coordinator.treeGeneration { return cache.tree }
        var bytes: [UInt8] = []
        LiveApp.writeTree(of: coordinator, into: &bytes)
        let tree = CoordinatorTree(bytes: bytes)
        treeCache = (coordinator.treeGeneration, tree)
        return tree
    }

    /// Appends `coordinator.tree`'s compact encoding: `{"children":[…],"name":…}`.
    private static func writeTree(of coordinator: Coordinator, into output: inout [UInt8]) {
        JSON.append("{\"children\":[", to: &output)
        let children = coordinator.children
        for index in children.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            writeTree(of: children[index], into: &output)
        }
        JSON.append("],\"name\":", to: &output)
        JSON.writeString(coordinator.name, into: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// `state(defaults:)` as a JSON response prepared once for as long as nothing changes: the
    /// state endpoint is the hot path, and most reads see the same state again.
    func stateResponse(_ session: SessionContext) -> PreparedResponse {
        // The values are compared without making the session's defaults store.
        let values = session.storedValues
        // Another session of the user may have changed the user's store since.
        let userVersion = session.userStoreVersion
        if let cache = stateCache, cache.version == root.version, cache.values == values,
            cache.userVersion == userVersion
        {
            return cache.response
        }
        let response = PreparedResponse(
            .json(bytes: stateBytes(defaults: session.defaults, userDefaults: session.userDefaults)))
        // Kept while the budget for kept answers has room (else made again for the next read).
        stateCache = mayKeep(response) ? (root.version, values, userVersion, response) : nil
        return response
    }
}

/// A coordinator tree as the state and the snapshot write it: `Coordinator.tree`'s compact
/// encoding (`tree.serialized`).
struct CoordinatorTree {
    /// `{"children":[…],"name":…}`, recursively.
    let bytes: [UInt8]
    /// The tree read back from `bytes` (made at each call).
    var json: JSON { (try? JSON(parsing: bytes)) ?? .null }
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

extension LiveApp {
    /// The state's `actions`: what the visible screen offers, then `launch` (every screen accepts
    /// it), then `show` when the visible screen has routes — one list for the state's tree and its
    /// bytes.
    func visibleActionNames() -> [String] {
        var actions = root.visibleScreen.actions
        if !actions.contains(ActionDescription.launchName) { actions.append(ActionDescription.launchName) }
        if !visibleRoutes().isEmpty { actions.append(ActionDescription.show.name) }
        return actions
    }
}
