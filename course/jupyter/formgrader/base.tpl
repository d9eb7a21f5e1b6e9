{#- Every Formgrader page: nbgrader's base page, then the course's words and hidden buttons (traduccion.html). -#}
{%- extends "nbgrader/base.tpl" -%}
{%- block script -%}
{% include "traduccion.html" %}
{%- endblock -%}
