{#- nbgrader's assignment list, with the course's instructions (the exchange is not used: course/CORREGIR.md). -#}
{%- extends "nbgrader/manage_assignments.tpl" -%}
{%- block messages -%}
<div class="panel panel-default" id="llmlab-instrucciones">
  <div class="panel-body">
    <ol>
      <li>Cada lab es una tarea; sus cuadernos del profesor están en <code>solutions/</code> y se publican con
          <code>make release</code> (escribe <code>labs/</code> con copia de seguridad de lo que alguien cambiara).</li>
      <li>«Generar» y «Vista previa» trabajan en una carpeta aparte (<code>release/</code> de esta clase), nunca en
          <code>labs/</code>: no tocan los cuadernos de nadie.</li>
      <li>Las entregas se corrigen con <code>make grade</code> (cada una aislada). Aquí se corrigen a mano las
          respuestas razonadas: «Corrección manual» → tarea → cuaderno → alumno.</li>
      <li>Después, <code>make grades</code> escribe <code>grades.csv</code>, el informe y las páginas de devolución
          con tus notas y comentarios. Publicar y recoger por el «exchange» de nbgrader no se usa en este curso.</li>
    </ol>
  </div>
</div>
{%- endblock -%}
{#- No "Add new assignment": a lab is written in solutions/ (its .py source), never as an empty folder. -#}
{%- block table_footer -%}
{%- endblock -%}
