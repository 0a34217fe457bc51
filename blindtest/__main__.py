from blindtest.cli import main

main()
