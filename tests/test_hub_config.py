"""The course hub's configuration files, checked without starting anything (fast; the hub itself runs in
tests/browser/test_hub.py): the one-machine hub's settings, the LTI values the docs give, the Zero to
JupyterHub values, the TLJH recipe and the course image, as far as this machine can check them (no Docker
daemon, no Kubernetes)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HUB = REPO / "course" / "hub"
pytestmark = pytest.mark.e2e  # runs nbgrader's config loading in subprocesses: not a unit test


def _load(path: Path, env: dict, monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def test_the_local_hub_listens_on_loopback_with_the_course_roles(tmp_path, monkeypatch):
    pytest.importorskip("jupyterhub")
    c = _load(HUB / "jupyterhub_config.py", {"LLMLAB_HUB_DIR": str(tmp_path), "LLMLAB_HUB_PASSWORD": "x" * 12,
                                             "LLMLAB_HUB_STUDENTS": "ana,diego"}, monkeypatch)
    assert c.JupyterHub.ip == c.JupyterHub.hub_ip == "127.0.0.1"
    assert c.ConfigurableHTTPProxy.api_url.startswith("http://127.0.0.1:")
    assert c.Authenticator.allowed_users == {"ana", "diego", "profesor"}
    assert c.JupyterHub.spawner_class == "simple" and c.JupyterHub.cleanup_servers is True
    assert (tmp_path / "exchange").stat().st_mode & 0o777 == 0o777


def test_the_hub_refuses_to_start_without_a_password(tmp_path, monkeypatch):
    monkeypatch.delenv("LLMLAB_HUB_PASSWORD", raising=False)
    with pytest.raises(SystemExit, match="LLMLAB_HUB_PASSWORD"):
        _load(HUB / "jupyterhub_config.py", {"LLMLAB_HUB_DIR": str(tmp_path)}, monkeypatch)


def test_the_instructor_grades_where_make_grade_puts_the_collected_class(tmp_path, monkeypatch):
    """nbgrader collect writes <hub>/<class>/; grade.py grades --submitted <hub>/<class> in build/grading/<class>."""
    pytest.importorskip("nbgrader")
    code = ("from nbgrader.apps import NbGrader; a = NbGrader(); a.initialize([]); d = a.coursedir; "
            "print(d.root); print(d.format_path(d.submitted_directory, 'ana', 'lab01')); print(d.db_url); "
            "print(d.format_path(d.feedback_directory, 'ana', 'lab01'))")
    env = {"JUPYTER_CONFIG_PATH": str(HUB / "profesor"), "LLMLAB_HUB_DIR": str(tmp_path),
           "LLMLAB_HUB_CLASS": "clase-prueba", "PATH": "/usr/bin:/bin"}
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    finally:  # loading the config makes the (empty) course root, as the instructor's server needs it
        shutil.rmtree(REPO / "build" / "grading" / "clase-prueba", ignore_errors=True)
    assert out.returncode == 0, out.stderr
    root, submitted, db, feedback = out.stdout.split()
    assert root == str(REPO / "build" / "grading" / "clase-prueba")
    assert submitted == str(tmp_path / "clase-prueba" / "ana" / "lab01")
    assert db == "sqlite:///" + root + "/gradebook.db" and feedback == root + "/feedback/ana/lab01"



def test_students_name_their_submissions_after_the_hub_user(tmp_path):
    pytest.importorskip("nbgrader")
    code = "from nbgrader.apps import NbGrader; a = NbGrader(); a.initialize([]); print(a.coursedir.student_id)"
    env = {"JUPYTER_CONFIG_PATH": str(HUB / "alumno"), "LLMLAB_HUB_DIR": str(tmp_path), "JUPYTERHUB_USER": "ana",
           "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ana"


def _readme_python(marker: str) -> str:
    text = (HUB / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return textwrap.dedent(next(b for b in blocks if marker in b))


def test_the_documented_lti_settings_are_real_traits():
    pytest.importorskip("ltiauthenticator")
    from ltiauthenticator.lti13.auth import LTI13Authenticator
    from traitlets.config import Config

    code = _readme_python("LTI13Authenticator")
    c = Config()
    exec(compile(code, "README.md", "exec"), {"c": c})
    names = set(LTI13Authenticator.class_trait_names(config=True))
    assert set(c.LTI13Authenticator) <= names, set(c.LTI13Authenticator) - names
    auth = LTI13Authenticator(config=c)  # types validated by traitlets
    assert list(auth.client_id) == ["<id de cliente que da el LMS>"]


def test_zero_to_jupyterhub_values():
    yaml = pytest.importorskip("yaml")
    values = yaml.safe_load((HUB / "z2jh" / "config.yaml").read_text())
    single = values["singleuser"]
    mounts = {m["name"]: m["mountPath"] for m in single["storage"]["extraVolumeMounts"]}
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in single["storage"]["extraVolumes"]}
    # the exchange volume is where the students' nbgrader config looks: $LLMLAB_HUB_DIR/exchange
    assert mounts["llmlab-exchange"] == single["extraEnv"]["LLMLAB_HUB_DIR"] + "/exchange"
    assert claims["llmlab-exchange"]
    assert single["cpu"]["limit"] and single["memory"]["limit"] and single["image"]["tag"] != "latest"
    for name, code in values["hub"]["extraConfig"].items():
        compile(code, f"extraConfig.{name}", "exec")
    auth = values["hub"]["config"]["JupyterHub"]["authenticator_class"]
    lti = values["hub"]["config"]["LTI13Authenticator"]
    assert auth.endswith("LTI13Authenticator")
    try:
        from ltiauthenticator.lti13.auth import LTI13Authenticator
    except ImportError:
        return
    assert set(lti) <= set(LTI13Authenticator.class_trait_names(config=True))


def test_tljh_recipe_parses():
    subprocess.run(["sh", "-n", str(HUB / "tljh" / "instalar.sh")], check=True)
    compile((HUB / "tljh" / "llmlab.py").read_text(), "llmlab.py", "exec")
    recipe = (HUB / "tljh" / "instalar.sh").read_text()
    for path in re.findall(r"/srv/llmlab/repo/(\S+?)[\s\"]", recipe):
        assert (REPO / path.split("[")[0]).exists(), path


def test_the_course_image_uses_this_repository_and_its_extras():
    """No Docker daemon here: every file the Dockerfile copies or reads exists, its extras exist, its base is pinned."""
    text = (HUB / "imagen" / "Dockerfile").read_text()
    base = re.search(r"^FROM (\S+)", text, re.M).group(1)
    assert ":" in base and not base.endswith(":latest")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for used in re.findall(r"/opt/llmlab\[([a-z,]+)\]", text):
        assert set(used.split(",")) <= set(extras), used
    for path in re.findall(r"/opt/llmlab/(\S+)", text):
        path = re.split(r"[\[);\"\\]", path)[0]
        if not path.startswith((".venv", "build", "course/hub/proxy/node_modules")):
            assert (REPO / path).exists(), path
    assert "environment.yml" in text and "-e ." in (REPO / "environment.yml").read_text()
