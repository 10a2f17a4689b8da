"""Checks of overhead.py that need no workload: how it names and finds each profiler's files.
Run by ctest (bench/CMakeLists.txt): python3 -m unittest overhead_test."""
import os
import tempfile
import unittest

import overhead


class MassifFilesTest(unittest.TestCase):
    def test_massif_output_is_named_massif_out(self):
        # Valgrind's own default name is massif.out.PID, and ms_print users look for it.
        massif = next(c for c in overhead.CONFIGS if c.key == "massif")
        wl = overhead.Workload("w", "w", lambda d: ["full"], lambda d: ["reduced"], "r", "w", False)
        argv, _ = massif.command(wl, None, "/d")
        self.assertIn("--massif-out-file=/d/massif.out.%p", argv)
        self.assertEqual(argv[-1], "reduced")

    def test_massif_files_are_found_by_that_name(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ["massif.out.123", "massif.out.456", "p.x.1.pb.gz"]:
                open(os.path.join(d, name), "w").close()
            found = sorted(os.path.basename(f) for f in overhead._profile_files(d, "massif"))
            self.assertEqual(found, ["massif.out.123", "massif.out.456"])


if __name__ == "__main__":
    unittest.main()
