import AppShellConcurrency
import Testing

/// When the program starts itself again with the allocator's setting, and with which.
@Suite struct AllocatorTuningTests {
    @Test func anEnvironmentWithoutTheSettingGetsIt() {
        #expect(AllocatorTuning.tunables(restartingWith: [:]) == "glibc.malloc.tcache_count=256")
        #expect(AllocatorTuning.tunables(restartingWith: ["GLIBC_TUNABLES": ""]) == "glibc.malloc.tcache_count=256")
    }

    @Test func otherSettingsAreKeptBeforeIt() {
        let environment = ["GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.tcache_max=2048"]
        #expect(
            AllocatorTuning.tunables(restartingWith: environment)
                == "glibc.malloc.arena_max=2:glibc.malloc.tcache_max=2048:glibc.malloc.tcache_count=256")
    }

    @Test func aCountAlreadySetIsTheUsersChoice() {
        for value in ["glibc.malloc.tcache_count=0", "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=7"] {
            #expect(AllocatorTuning.tunables(restartingWith: ["GLIBC_TUNABLES": value]) == nil)
        }
        // A setting whose name only begins the same is another one.
        #expect(
            AllocatorTuning.tunables(restartingWith: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count_x=1"])
                == "glibc.malloc.tcache_count_x=1:glibc.malloc.tcache_count=256")
    }

    @Test func neverTwiceNorUnderValgrind() {
        #expect(AllocatorTuning.tunables(restartingWith: [AllocatorTuning.marker: "1"]) == nil)
        let valgrind = ["LD_PRELOAD": "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so"]
        #expect(AllocatorTuning.tunables(restartingWith: valgrind) == nil)
        #expect(AllocatorTuning.tunables(restartingWith: ["LD_PRELOAD": "/usr/lib/libfoo.so"]) != nil)
    }
}
