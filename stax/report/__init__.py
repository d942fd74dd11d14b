"""The HTML explain report (`stax.report.page`) and progress bars for long compiles
(`stax.report.progress`). This package file imports nothing, so `stax.report.progress` stays
cheap to import from the compiler."""
