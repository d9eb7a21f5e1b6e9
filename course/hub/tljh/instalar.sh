#!/bin/sh
# The llmlab course on The Littlest JupyterHub, on a fresh Ubuntu/Debian server, as root. Read it before running it.
#   sh course/hub/tljh/instalar.sh <URL of the course repository> <instructor>
# Not run by the tests (it installs a system service); tests/test_hub_config.py checks its syntax.
set -eu
REPO_URL=$1
INSTRUCTOR=${2:-profesor}

# 1. TLJH itself, with the instructor as hub admin (https://tljh.jupyter.org: "Installing on your own server").
curl -L https://tljh.jupyter.org/bootstrap.py | python3 - --admin "$INSTRUCTOR"

# 2. The course, in one place every user can read; the instructor owns it (make grade writes build/ there).
apt-get install -y --no-install-recommends git make bubblewrap
mkdir -p /srv/llmlab/exchange
git clone "$REPO_URL" /srv/llmlab/repo
chown -R "jupyter-$INSTRUCTOR" /srv/llmlab/repo
chmod 0777 /srv/llmlab/exchange        # nbgrader's documented mode; it sets the modes inside itself

# 3. The course environment in the users' shared environment, then JupyterLab in Spanish.
/opt/tljh/user/bin/pip install -e "/srv/llmlab/repo[course,hub]"

# 4. Who is instructor and where the exchange is; JupyterHub reads this file at start.
cp /srv/llmlab/repo/course/hub/tljh/llmlab.py /opt/tljh/config/jupyterhub_config.d/llmlab.py
sed -i "s/^INSTRUCTORS = .*/INSTRUCTORS = {\"$INSTRUCTOR\"}/" /opt/tljh/config/jupyterhub_config.d/llmlab.py

# 5. Login: the native authenticator (accounts approved by the admin) or LTI (see course/hub/README.md).
tljh-config set auth.type nativeauthenticator.NativeAuthenticator
tljh-config set limits.memory 4G
tljh-config set limits.cpu 2
tljh-config reload
