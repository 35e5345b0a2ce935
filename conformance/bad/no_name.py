"""HC105: no `name`, so wandb runs and saved files get a generic name that collides across envs."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC105"]


class NamelessEnv(LetterCountEnv):
    name = None


if __name__ == "__main__":
    NamelessEnv.cli()
