"""Grading that treats every submission as hostile: a pipeline of small stages.

    stage     (stage.py)     read a submission without following links, rebuild the notebook to grade from the
                             lab's kit: locked and test cells restored from the instructor's source, order repaired
    scan      (scan.py)      static analysis of the student's code (AST, not regexes): reasons to review
    sandbox   (sandbox.py)   the bubblewrap jail: no network, no view of the course, limits, a PID namespace
    execute   (execute.py)   run the notebook in the jail (runner.py drives the kernel from inside, guard/
                             watches the kernel from within) and collect what came out after every process ended;
                             a watchdog bounds the jail's total memory (processes + tmpfs) and kills it past that
    verify    (verify.py)    check the executed cells against what was sent and replay every recorded check
                             outside the jail against the instructor's run: points only for verified results
    score     (score.py)     per-test points, flags and notes: the Result of one submission
    task      (task.py)      the pure task: (kit, submission) -> Result, feedback and autograded notebook
    release   (generate_batch.py) the labs' releases: nbgrader generate_assignment, several labs in one process
    kit       (kit.py)       what every task of a lab needs: sources, release, support files, trusted transcript
    journal   (journal.py)   one record per finished submission (atomic files): resumable, idempotent
    executors (executors.py) where tasks run: a local process pool (all cores) or a Dask cluster
    processes (processes.py) workers and nbgrader's processes die with the grader, even on SIGKILL
    gradebook (gradebook.py) the trusted merge into nbgrader's gradebook, grades.csv (atomic writes)
    report    (report.py)    the student × lab table, grading_report.json, messages in Spanish

Faults: one submission's odd file, raising task or failed merge is that submission's result, never the batch's
end; failures of the grader itself are flagged "error del corrector", never journaled, graded again next run;
the journal is the source of truth (the gradebook is checked against it and rebuilt when missing, stale or
corrupt); one run per grading root (files.grading_lock); an output folder that cannot be written, or Ctrl-C,
stops the run with a Spanish message, keeping everything journaled (grade.py).

Only the trusted side (everything here except runner.py and guard/, which run inside the jail) writes the
gradebook, grades.csv, the feedback or the report.
"""
