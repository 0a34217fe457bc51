from blindtest.cli import cli

cli.main(prog_name="blindtest")
