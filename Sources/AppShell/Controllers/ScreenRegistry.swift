/// The app's screens by name: it rebuilds the screens a snapshot names (the root's child, the
/// navigation stack, the modal screen) without a switch per app. `RestorationRegistry` derives
/// one from the app's coordinators and then rebuilds the coordinators that own them.
package struct ScreenRegistry: Sendable {
    private let makers: [String: @Sendable () -> ViewController]

    /// The screens of `types` that are `RestorableScreen`s, by the name a new one carries.
    package init(_ types: [ViewController.Type]) {
        var makers: [String: @Sendable () -> ViewController] = [:]
        for case let type as any RestorableScreen.Type in types {
            makers[type.init().name] = Self.maker(of: type)
        }
        self.makers = makers
    }

    /// What makes a new `S` (a generic closure captures no metatype value).
    private static func maker<S: RestorableScreen>(of type: S.Type) -> @Sendable () -> ViewController {
        { S() }
    }

    /// The names of the screens the registry can make.
    package var names: Set<String> { Set(makers.keys) }

    /// A new screen named `name`, or `nil` when no registered type has that name.
    package func make(_ name: String) -> ViewController? { makers[name]?() }

    /// The screens a snapshot names, made afresh (no lifecycle runs; nothing is wired yet).
    package struct Restored {
        /// The root's child: a navigation controller when the snapshot has a stack.
        package let child: ViewController
        /// The modal screen, if any.
        package let presented: ViewController?
    }

    /// The screens `snapshot` names, or `nil` when it names one no registered type has (the
    /// session then starts afresh).
    package func restore(_ snapshot: ShellSnapshot) -> Restored? {
        let child: ViewController
        if snapshot.stack.isEmpty {
            guard let screen = make(snapshot.root) else { return nil }
            child = screen
        } else {
            let screens = snapshot.stack.compactMap(make)
            guard screens.count == snapshot.stack.count, snapshot.stack.first == snapshot.root else { return nil }
            child = NavigationController(restoring: screens)
        }
        var presented: ViewController?
        if let name = snapshot.presented {
            guard let screen = make(name) else { return nil }
            presented = screen
        }
        return Restored(child: child, presented: presented)
    }
}
